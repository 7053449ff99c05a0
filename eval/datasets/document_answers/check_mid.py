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
It runs no retriever and no model. Helpers are shared with check_long.py, which it does not change.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from check_long import (  # type: ignore[import-not-found]  # noqa: E402  (a script beside this one)
    FIELDS,
    KINDS,
    LISTS,
    WHOLE,
    norm,
    parse_document,
    span,
    stored_pages,
)

DATASET = HERE / "requests-mid.jsonl"
LANGS = ("en", "es", "de", "pt")


def load_fetch_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_mid", HERE / "fetch_mid.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    missing = [doc for doc in docs if not (HERE / doc).exists()]
    if missing:
        for doc in missing:
            print(f"MISSING {doc}")
        print(
            "Run: .venv/bin/python eval/datasets/document_answers/fetch_mid.py  and  "
            ".venv/bin/python eval/datasets/real_documents/fetch.py"
        )
        return 1

    fetch = load_fetch_module()
    pins = fetch.pinned()
    pages: dict[str, list[str]] = {}
    raw: dict[str, list[str]] = {}
    stored: dict[str, list[str] | None] = {}
    for doc in docs:
        path = HERE / doc
        digest = fetch.sha256(path)
        if doc not in pins:
            failures.append(f"{doc}: no pinned sha256 in fetch_mid.py")
        elif digest != pins[doc]:
            failures.append(f"{doc}: sha256 {digest} is not the pinned {pins[doc]}")
        data = path.read_bytes()
        pages[doc] = [page.text for page in parse_document(path.name, data).pages]
        raw[doc] = raw_pages(data)
        stored[doc] = stored_pages(path.name, data)

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
        if kind not in KINDS:
            failures.append(f"{rid}: unknown kind {kind!r}")
        bullets = row["bullets"]
        if bullets is not None and (not isinstance(bullets, int) or isinstance(bullets, bool) or bullets < 1):
            failures.append(f"{rid}: bullets must be null or a positive integer")
        if row["lang"] not in LANGS:
            failures.append(f"{rid}: lang {row['lang']!r} not in {LANGS}")
        if not isinstance(row["text"], str) or not row["text"].strip():
            failures.append(f"{rid}: empty request text")
        if not isinstance(expect, list) or not expect or not all(isinstance(e, str) and e.strip() for e in expect):
            failures.append(f"{rid}: expect must be a list of non-empty strings")
            continue
        low, high = (2, 5) if kind in WHOLE else (1, 12) if kind in LISTS else (2, 6)
        if not low <= len(expect) <= high:
            failures.append(f"{rid}: {len(expect)} expect strings for {kind} (want {low}-{high})")
        if len({norm(e) for e in expect}) != len(expect):
            failures.append(f"{rid}: expect strings repeat (case-insensitively)")

        texts = pages[doc]
        count = len(texts)
        scope, spread = row["scope_pages"], row["spread"]
        if kind in WHOLE:
            if scope is not None:
                failures.append(f"{rid}: a {kind} request has a spread, not scope_pages")
            spans = [span(e) for e in spread] if isinstance(spread, list) else [None]
            entries = [e for e in spans if e is not None]
            if not 1 <= len(spans) <= 6 or len(entries) != len(spans):
                failures.append(f"{rid}: spread {spread} is not 1-6 pages or [first, last] ranges")
            else:
                for a, b in entries:
                    if not 1 <= a <= b <= count:
                        failures.append(f"{rid}: spread entry {a}-{b} outside 1-{count}")
                    elif not any(texts[p - 1].strip() for p in range(a, b + 1)):
                        failures.append(f"{rid}: spread entry {a}-{b} has no text")
                starts = [a for a, _ in entries]
                if starts != sorted(starts):
                    failures.append(f"{rid}: spread entries are not in page order")
                if entries[0][0] > max(1, count / 3) or entries[-1][1] < 2 * count / 3:
                    failures.append(f"{rid}: spread does not reach from the first third to the last third")
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

    for message in warnings:
        print(f"warning: {message}")
    for message in notes if verbose else []:
        print(f"note: {message}")
    if notes and not verbose:
        print(f"note: {len(notes)} scoped expect item(s) also occur outside their scope (--verbose lists them)")
    print()
    print("| document | pages | chars | " + " | ".join(KINDS) + " | all |")
    print("|---|---|---|" + "---|" * (len(KINDS) + 1))
    total: Counter = Counter()
    for doc in docs:
        counts = by_doc[doc]
        total.update(counts)
        cells = " | ".join(str(counts.get(k, 0)) for k in KINDS)
        chars = sum(len(t) for t in pages[doc])
        print(f"| {Path(doc).name} | {len(pages[doc])} | {chars:,} | {cells} | {sum(counts.values())} |")
    cells = " | ".join(str(total.get(k, 0)) for k in KINDS)
    print(f"| all | {sum(len(p) for p in pages.values())} | | {cells} | {sum(total.values())} |")
    scoped = sum(1 for row in rows if row.get("scope_pages") is not None)
    bullets = sorted(row["bullets"] for row in rows if row.get("bullets"))
    print(
        f"\n{len(rows)} requests over {len(docs)} documents; {scoped} scoped to pages, {len(rows) - scoped} "
        f"whole-document with a spread; {len(bullets)} ask for a number of bullets {bullets}; "
        f"languages {dict(sorted(langs.items()))}"
    )
    for message in failures:
        print(f"FAIL {message}")
    print(f"{len(failures)} failure(s), {len(warnings)} warning(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
