"""Check the mid-size set of the document-answers eval (requests-mid.jsonl) against its documents.

    .venv/bin/python eval/datasets/document_answers/check_mid.py [--verbose]

It loads requests-mid.jsonl, checks that every document is there (run fetch_mid.py first for the two
under mid/, and ../real_documents/fetch.py for the four under ../real_documents/pdfs/) with its sha256
pinned in fetch_mid.py, parses each with ingestion.parsers.parse_document and checks:

- the schema: the fields of the long set, unique ids in order (mi01, mi02, ...), a known `kind`,
  `bullets` null or a positive integer, `lang` one of en/es/de/pt, 2-5 `expect` strings for
  overview/summary/key_points/doc_type_audience, 1-12 for numbers/dates/names and 2-6 for the others;
- every `expect` string occurs as a whole word (no letter or digit touching either end),
  case-insensitive and whitespace-normalised, in the parsed text of the document, or of its
  `scope_pages` when the request has them;
- whole-document kinds have a `spread` (1-6 pages or [first, last] ranges, inside the document, on
  pages with text, in order, from the first third to the last third) and no `scope_pages`; the other
  kinds have `scope_pages` [first, last] inside the document and no `spread`.

It warns (without failing) when an `expect` string is missing from PDFium's raw page text (the parser
may render a page as a table), or is found only once running heads and feet are kept (the indexer blanks
them at ingest). --verbose lists scoped items that also occur outside their scope. It prints pages and
characters per document, counts per document and kind, and per language, and exits 1 on any failure.
It runs no retriever and no model. The checks the two sets share are check_long.py's functions.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from check_long import (  # type: ignore[import-not-found]  # noqa: E402  (a script beside this one)
    FIELDS,
    WHOLE,
    check_expect,
    check_kind,
    check_spread,
    load_fetch_module,
    missing_documents,
    norm,
    print_failures,
    print_messages,
    print_table,
    read_documents,
    span,
)

DATASET = HERE / "requests-mid.jsonl"
LANGS = ("en", "es", "de", "pt")


def whole_word(item: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(norm(item)) + r"(?!\w)")


def raw_pages(data: bytes) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def main() -> int:
    verbose = "--verbose" in sys.argv[1:]
    lines = DATASET.read_text(encoding="utf-8").splitlines()
    failures: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    rows = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            failures.append(f"line {n}: not JSON ({error})")

    docs = sorted(
        {row.get("doc", "") for row in rows}, key=lambda d: min(i for i, r in enumerate(rows) if r.get("doc") == d)
    )
    hint = (
        "Run: .venv/bin/python eval/datasets/document_answers/fetch_mid.py  and  "
        ".venv/bin/python eval/datasets/real_documents/fetch.py"
    )
    if missing_documents(docs, hint):
        return 1
    pages, stored = read_documents(docs, load_fetch_module("fetch_mid"), failures)
    raw = {doc: raw_pages((HERE / doc).read_bytes()) for doc in docs}

    by_doc: dict[str, Counter] = defaultdict(Counter)
    langs: Counter = Counter()
    for index, row in enumerate(rows, start=1):
        rid = row.get("id", "?")
        if set(row) != FIELDS:
            failures.append(f"{rid}: fields {sorted(row)} are not {sorted(FIELDS)}")
            continue
        if rid != f"mi{index:02d}":
            failures.append(f"{rid}: id out of order (expected mi{index:02d})")
        kind, doc, expect = row["kind"], row["doc"], row["expect"]
        by_doc[doc][kind] += 1
        langs[row["lang"]] += 1
        check_kind(rid, kind, row["bullets"], failures)
        if row["lang"] not in LANGS:
            failures.append(f"{rid}: lang {row['lang']!r} not in {LANGS}")
        if not isinstance(row["text"], str) or not row["text"].strip():
            failures.append(f"{rid}: empty request text")
        if not check_expect(rid, kind, expect, ((2, 5), (1, 12), (2, 6)), failures):
            continue

        texts = pages[doc]
        count = len(texts)
        scope, spread = row["scope_pages"], row["spread"]
        if kind in WHOLE:
            if scope is not None:
                failures.append(f"{rid}: a {kind} request has a spread, not scope_pages")
            check_spread(rid, spread, texts, 1, 1, failures)
            first, last = 1, count
        else:
            if spread is not None:
                failures.append(f"{rid}: a {kind} request has scope_pages, not a spread")
            bounds = span(scope) if isinstance(scope, list) else None
            if bounds is None or not 1 <= bounds[0] <= bounds[1] <= count:
                failures.append(f"{rid}: scope_pages {scope} is not [first, last] within 1-{count}")
                continue
            first, last = bounds

        window = norm(" ".join(texts[first - 1 : last]))
        raw_window = norm(" ".join(raw[doc][first - 1 : last]))
        kept = stored[doc]
        kept_window = norm(" ".join(kept[first - 1 : last])) if kept is not None else None
        for item in expect:
            pattern = whole_word(item)
            if not pattern.search(window):
                where = f"pages {first}-{last}" if scope is not None else "the document"
                failures.append(f"{rid}: expect {item!r} not found as a whole word in {where} of {doc}")
                continue
            if not pattern.search(raw_window):
                warnings.append(f"{rid}: {item!r} is in the parsed text but not in PDFium's raw text")
            if kept_window is not None and not pattern.search(kept_window):
                warnings.append(f"{rid}: {item!r} is only in running heads/feet, blanked at ingest")
            if scope is not None:
                outside = [
                    n for n, text in enumerate(texts, start=1) if not first <= n <= last and pattern.search(norm(text))
                ]
                if outside:
                    notes.append(f"{rid}: {item!r} also occurs outside its scope (p. {', '.join(map(str, outside))})")

    print_messages(warnings, notes, verbose)
    print_table(docs, pages, by_doc, chars=True)
    scoped = sum(1 for row in rows if row.get("scope_pages") is not None)
    bullets = sorted(row["bullets"] for row in rows if row.get("bullets"))
    print(
        f"\n{len(rows)} requests over {len(docs)} documents; {scoped} scoped to pages, {len(rows) - scoped} "
        f"whole-document with a spread; {len(bullets)} ask for a number of bullets {bullets}; "
        f"languages {dict(sorted(langs.items()))}"
    )
    return print_failures(failures, warnings)


if __name__ == "__main__":
    sys.exit(main())
