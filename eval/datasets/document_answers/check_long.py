"""Check the long set of the document-answers eval (requests-long.jsonl) against its documents.

    .venv/bin/python eval/datasets/document_answers/check_long.py

It loads requests-long.jsonl, checks that every document is there (run fetch_long.py first for the
ones under long/) with its pinned sha256, parses each with ingestion.parsers.parse_document and checks:

- the schema: unique ids, a known `kind`, `bullets` null or a positive integer, `lang`, 2-4 `expect`
  strings for overview/summary/key_points/doc_type_audience and 4-12 for numbers/dates/names;
- every `expect` string occurs in the document's parsed text, or within `scope_pages` when the
  request has them (case-insensitive, whitespace-normalised);
- `scope_pages` is [first, last] inside the document; numbers, dates and names requests have one;
- a request without `scope_pages` has a `spread` of 3-6 pages or [first, last] ranges, inside the
  document, on pages that have text, ordered, from the first third to the last third of the document.

It warns (without failing) when an `expect` string is found only once running heads and feet are kept
(the indexer blanks them at ingest). With --verbose it also lists each scoped item that occurs outside
its scope too (harmless, but a short item found on many pages can match an answer by chance). It
prints the documents' pages, counts per document and kind, and exits 1 on any failure. It runs no
retriever and no model.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DATASET = HERE / "requests-long.jsonl"
sys.path.insert(0, str(ROOT))

from ingestion.parsers import parse_document  # noqa: E402

KINDS = [
    "overview",
    "summary",
    "key_points",
    "numbers",
    "dates",
    "names",
    "assumptions_limitations",
    "action_items",
    "doc_type_audience",
]
WHOLE = {"overview", "summary", "key_points", "doc_type_audience"}
LISTS = {"numbers", "dates", "names"}
FIELDS = {"id", "doc", "text", "kind", "bullets", "expect", "lang", "spread", "scope_pages"}


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def load_fetch_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_long", HERE / "fetch_long.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stored_pages(name: str, data: bytes) -> list[str] | None:
    """Page texts as the indexer keeps them (running heads and feet blanked), or None if unavailable."""
    try:
        from core.settings import Settings
        from ingestion.parsers import open_file
        from ingestion.running_lines import RunningLineRule

        settings = Settings()
        rule = RunningLineRule(settings.running_line_margin, settings.running_line_share, settings.running_line_sample)
        parsed = open_file(name, data, running=rule)
        try:
            return [page.text for page in parsed.pages()]
        finally:
            parsed.close()
    except Exception:
        return None


def span(entry: object) -> tuple[int, int] | None:
    if isinstance(entry, int) and not isinstance(entry, bool):
        return entry, entry
    if (
        isinstance(entry, list)
        and len(entry) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in entry)
        and entry[0] <= entry[1]
    ):
        return entry[0], entry[1]
    return None


def main() -> int:
    verbose = "--verbose" in sys.argv[1:]
    rows = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    failures: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []

    docs = sorted({row["doc"] for row in rows})
    missing = [doc for doc in docs if not (HERE / doc).exists()]
    if missing:
        for doc in missing:
            print(f"MISSING {doc}")
        print("Run: .venv/bin/python eval/datasets/document_answers/fetch_long.py  (R-intro.pdf comes with shared/)")
        return 1

    fetch = load_fetch_module()
    pins = fetch.pinned()
    pages: dict[str, list[str]] = {}
    stored: dict[str, list[str] | None] = {}
    for doc in docs:
        path = HERE / doc
        digest = fetch.sha256(path)
        if doc not in pins:
            failures.append(f"{doc}: no pinned sha256 in fetch_long.py")
        elif digest != pins[doc]:
            failures.append(f"{doc}: sha256 {digest} is not the pinned {pins[doc]}")
        data = path.read_bytes()
        parsed = parse_document(path.name, data)
        pages[doc] = [page.text for page in parsed.pages]
        stored[doc] = stored_pages(path.name, data)

    seen: set[str] = set()
    by_doc: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        rid = row.get("id", "?")
        if set(row) != FIELDS:
            failures.append(f"{rid}: fields {sorted(row)} are not {sorted(FIELDS)}")
            continue
        if rid in seen:
            failures.append(f"{rid}: duplicate id")
        seen.add(rid)
        kind, doc, expect = row["kind"], row["doc"], row["expect"]
        by_doc[doc][kind] += 1
        if kind not in KINDS:
            failures.append(f"{rid}: unknown kind {kind!r}")
        bullets = row["bullets"]
        if bullets is not None and (not isinstance(bullets, int) or isinstance(bullets, bool) or bullets < 1):
            failures.append(f"{rid}: bullets must be null or a positive integer")
        if row["lang"] not in ("en", "fr"):
            failures.append(f"{rid}: lang {row['lang']!r}")
        if not row["text"].strip():
            failures.append(f"{rid}: empty request text")
        if not isinstance(expect, list) or not expect or not all(isinstance(e, str) and e.strip() for e in expect):
            failures.append(f"{rid}: expect must be a list of non-empty strings")
            continue
        low, high = (2, 4) if kind in WHOLE else (4, 12) if kind in LISTS else (1, 12)
        if not low <= len(expect) <= high:
            failures.append(f"{rid}: {len(expect)} expect strings for {kind} (want {low}-{high})")
        if len({norm(e) for e in expect}) != len(expect):
            failures.append(f"{rid}: expect strings repeat (case-insensitively)")

        texts = pages[doc]
        count = len(texts)
        scope = row["scope_pages"]
        spread = row["spread"]
        if scope is not None:
            bounds = span(scope) if isinstance(scope, list) else None
            if bounds is None or not 1 <= bounds[0] <= bounds[1] <= count:
                failures.append(f"{rid}: scope_pages {scope} is not [first, last] within 1-{count}")
                continue
            first, last = bounds
            if spread is not None:
                failures.append(f"{rid}: a scoped request has no spread (the spread is for whole-document requests)")
        else:
            first, last = 1, count
            if kind in LISTS:
                failures.append(f"{rid}: a {kind} request needs scope_pages")
            spans = [span(e) for e in spread] if isinstance(spread, list) else [None]
            entries = [e for e in spans if e is not None]
            if not 3 <= len(spans) <= 6 or len(entries) != len(spans):
                failures.append(f"{rid}: spread {spread} is not 3-6 pages or [first, last] ranges")
            else:
                for a, b in entries:
                    if not 1 <= a <= b <= count:
                        failures.append(f"{rid}: spread entry {a}-{b} outside 1-{count}")
                    elif not any(texts[p - 1].strip() for p in range(a, b + 1)):
                        failures.append(f"{rid}: spread entry {a}-{b} has no text")
                starts = [a for a, _ in entries]
                if starts != sorted(starts):
                    failures.append(f"{rid}: spread entries are not in page order")
                if entries[0][0] > count / 3 or entries[-1][1] < 2 * count / 3:
                    failures.append(f"{rid}: spread does not reach from the first third to the last third")

        window = norm(" ".join(texts[first - 1 : last]))
        kept = stored[doc]
        kept_window = norm(" ".join(kept[first - 1 : last])) if kept is not None else None
        for item in expect:
            needle = norm(item)
            if needle not in window:
                where = f"pages {first}-{last}" if scope is not None else "the document"
                failures.append(f"{rid}: expect {item!r} not found in {where} of {doc}")
                continue
            if kept_window is not None and needle not in kept_window:
                warnings.append(f"{rid}: {item!r} is only in running heads/feet, blanked at ingest")
            if scope is not None:
                outside = [
                    n for n, text in enumerate(texts, start=1) if not first <= n <= last and needle in norm(text)
                ]
                if outside:
                    shown = ", ".join(map(str, outside[:6])) + (" ..." if len(outside) > 6 else "")
                    notes.append(f"{rid}: {item!r} also occurs outside its scope (p. {shown})")

    for message in warnings:
        print(f"warning: {message}")
    for message in notes if verbose else []:
        print(f"note: {message}")
    if notes and not verbose:
        print(f"note: {len(notes)} scoped expect item(s) also occur outside their scope (--verbose lists them)")
    print()
    print("| document | pages | " + " | ".join(KINDS) + " | all |")
    print("|---|---|" + "---|" * (len(KINDS) + 1))
    total: Counter = Counter()
    for doc in docs:
        counts = by_doc[doc]
        total.update(counts)
        cells = " | ".join(str(counts.get(k, 0)) for k in KINDS)
        print(f"| {Path(doc).name} | {len(pages[doc])} | {cells} | {sum(counts.values())} |")
    cells = " | ".join(str(total.get(k, 0)) for k in KINDS)
    print(f"| all | {sum(len(p) for p in pages.values())} | {cells} | {sum(total.values())} |")
    scoped = sum(1 for row in rows if row.get("scope_pages") is not None)
    bulleted = sum(1 for row in rows if row.get("bullets"))
    print(
        f"\n{len(rows)} requests over {len(docs)} documents; {scoped} scoped to pages, "
        f"{len(rows) - scoped} whole-document with a spread; {bulleted} ask for a number of bullets"
    )
    absent = [k for k in KINDS if not total.get(k)]
    if absent:
        failures.append(f"kinds with no request: {absent}")
    for message in failures:
        print(f"FAIL {message}")
    print(f"{len(failures)} failure(s), {len(warnings)} warning(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
