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
retriever and no model. check_mid.py runs its own rules with the functions here (parameters say where
the two sets differ).
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


def load_fetch_module(name: str = "fetch_long") -> ModuleType:
    """The fetch script beside this one that pins the set's documents (fetch_mid for check_mid.py)."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
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


def missing_documents(docs: list[str], hint: str) -> bool:
    """Print the documents that are not there, and the hint to fetch them; True if any is missing."""
    missing = [doc for doc in docs if not (HERE / doc).exists()]
    for doc in missing:
        print(f"MISSING {doc}")
    if missing:
        print(hint)
    return bool(missing)


def read_documents(
    docs: list[str], fetch: ModuleType, failures: list[str]
) -> tuple[dict[str, list[str]], dict[str, list[str] | None]]:
    """Each document's parsed page texts and its page texts as the indexer stores them (see stored_pages).

    A document whose sha256 is not the one `fetch` (the set's fetch script) pins is a failure.
    """
    pins = fetch.pinned()
    pages: dict[str, list[str]] = {}
    stored: dict[str, list[str] | None] = {}
    for doc in docs:
        path = HERE / doc
        digest = fetch.sha256(path)
        if doc not in pins:
            failures.append(f"{doc}: no pinned sha256 in {fetch.__name__}.py")
        elif digest != pins[doc]:
            failures.append(f"{doc}: sha256 {digest} is not the pinned {pins[doc]}")
        data = path.read_bytes()
        pages[doc] = [page.text for page in parse_document(path.name, data).pages]
        stored[doc] = stored_pages(path.name, data)
    return pages, stored


Sizes = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]


def check_kind(rid: str, kind: str, bullets: object, failures: list[str]) -> None:
    """A known kind; bullets null or a positive integer."""
    if kind not in KINDS:
        failures.append(f"{rid}: unknown kind {kind!r}")
    if bullets is not None and (not isinstance(bullets, int) or isinstance(bullets, bool) or bullets < 1):
        failures.append(f"{rid}: bullets must be null or a positive integer")


def check_expect(rid: str, kind: str, expect: object, sizes: Sizes, failures: list[str]) -> bool:
    """A list of non-empty strings, as many as `sizes` says (whole-document kinds, lists, the others), no repeats.

    False when `expect` is not a list of non-empty strings: the request is checked no further.
    """
    if not isinstance(expect, list) or not expect or not all(isinstance(e, str) and e.strip() for e in expect):
        failures.append(f"{rid}: expect must be a list of non-empty strings")
        return False
    low, high = sizes[0] if kind in WHOLE else sizes[1] if kind in LISTS else sizes[2]
    if not low <= len(expect) <= high:
        failures.append(f"{rid}: {len(expect)} expect strings for {kind} (want {low}-{high})")
    if len({norm(e) for e in expect}) != len(expect):
        failures.append(f"{rid}: expect strings repeat (case-insensitively)")
    return True


def check_spread(
    rid: str, spread: object, texts: list[str], fewest: int, start_floor: int, failures: list[str]
) -> None:
    """`fewest`-6 pages or [first, last] ranges, inside the document, on pages with text, in page order, from
    the first third to the last third of the document: the first starts by page max(start_floor, pages / 3)."""
    count = len(texts)
    spans = [span(e) for e in spread] if isinstance(spread, list) else [None]
    entries = [e for e in spans if e is not None]
    if not fewest <= len(spans) <= 6 or len(entries) != len(spans):
        failures.append(f"{rid}: spread {spread} is not {fewest}-6 pages or [first, last] ranges")
        return
    for a, b in entries:
        if not 1 <= a <= b <= count:
            failures.append(f"{rid}: spread entry {a}-{b} outside 1-{count}")
        elif not any(texts[p - 1].strip() for p in range(a, b + 1)):
            failures.append(f"{rid}: spread entry {a}-{b} has no text")
    starts = [a for a, _ in entries]
    if starts != sorted(starts):
        failures.append(f"{rid}: spread entries are not in page order")
    if entries[0][0] > max(start_floor, count / 3) or entries[-1][1] < 2 * count / 3:
        failures.append(f"{rid}: spread does not reach from the first third to the last third")


def print_messages(warnings: list[str], notes: list[str], verbose: bool) -> None:
    for message in warnings:
        print(f"warning: {message}")
    for message in notes if verbose else []:
        print(f"note: {message}")
    if notes and not verbose:
        print(f"note: {len(notes)} scoped expect item(s) also occur outside their scope (--verbose lists them)")


def print_table(docs: list[str], pages: dict[str, list[str]], by_doc: dict[str, Counter], chars: bool) -> Counter:
    """The requests per document and kind, with each document's pages (and characters if `chars`); the totals."""
    print()
    print("| document | pages | " + ("chars | " if chars else "") + " | ".join(KINDS) + " | all |")
    print("|---|---|" + ("---|" if chars else "") + "---|" * (len(KINDS) + 1))
    total: Counter = Counter()
    for doc in docs:
        counts = by_doc[doc]
        total.update(counts)
        cells = " | ".join(str(counts.get(k, 0)) for k in KINDS)
        size = f"{sum(len(t) for t in pages[doc]):,} | " if chars else ""
        print(f"| {Path(doc).name} | {len(pages[doc])} | {size}{cells} | {sum(counts.values())} |")
    cells = " | ".join(str(total.get(k, 0)) for k in KINDS)
    blank = "| " if chars else ""
    print(f"| all | {sum(len(p) for p in pages.values())} | {blank}{cells} | {sum(total.values())} |")
    return total


def print_failures(failures: list[str], warnings: list[str]) -> int:
    """The failures and the counts; the exit code (1 on any failure)."""
    for message in failures:
        print(f"FAIL {message}")
    print(f"{len(failures)} failure(s), {len(warnings)} warning(s)")
    return 1 if failures else 0


def main() -> int:
    verbose = "--verbose" in sys.argv[1:]
    rows = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    failures: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []

    docs = sorted({row["doc"] for row in rows})
    hint = "Run: .venv/bin/python eval/datasets/document_answers/fetch_long.py  (R-intro.pdf comes with shared/)"
    if missing_documents(docs, hint):
        return 1
    pages, stored = read_documents(docs, load_fetch_module(), failures)

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
        check_kind(rid, kind, row["bullets"], failures)
        if row["lang"] not in ("en", "fr"):
            failures.append(f"{rid}: lang {row['lang']!r}")
        if not row["text"].strip():
            failures.append(f"{rid}: empty request text")
        if not check_expect(rid, kind, expect, ((2, 4), (4, 12), (1, 12)), failures):
            continue

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
            check_spread(rid, spread, texts, 3, 0, failures)

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

    print_messages(warnings, notes, verbose)
    total = print_table(docs, pages, by_doc, chars=False)
    scoped = sum(1 for row in rows if row.get("scope_pages") is not None)
    bulleted = sum(1 for row in rows if row.get("bullets"))
    print(
        f"\n{len(rows)} requests over {len(docs)} documents; {scoped} scoped to pages, "
        f"{len(rows) - scoped} whole-document with a spread; {bulleted} ask for a number of bullets"
    )
    absent = [k for k in KINDS if not total.get(k)]
    if absent:
        failures.append(f"kinds with no request: {absent}")
    return print_failures(failures, warnings)


if __name__ == "__main__":
    sys.exit(main())
