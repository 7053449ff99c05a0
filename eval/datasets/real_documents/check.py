"""Check the real-documents eval set against the documents it was written from.

    .venv/bin/python eval/datasets/real_documents/check.py

It loads questions.jsonl through eval.dataset.load_dataset, checks that every document is there (run
fetch.py first for the ones under pdfs/), parses each with ingestion.parsers.parse_document and checks:

- every gold passage occurs on its stated page, both as eval.metrics.normalize_passage compares
  passages and by whitespace and case alone;
- the reference or one of `references` occurs in the gold passage, or, for a row marked
  `"table": true`, on the gold page;
- every row marked `"paraphrased": true` shares no content word with its gold passages (lower case,
  stopwords removed, words of 4+ letters, compared on their first 5 letters);
- unanswerable and out-of-scope rows have no gold, and unanswerable rows name a `trap`.

It also warns (without failing) when a gold passage would be blanked as a running head or foot at
ingest, or is missing from PDFium's raw page text (the case for text pdfplumber rendered as a table).
It prints counts by document and category, trap counts and the paraphrased count, and exits 1 on any
failure. It runs no retriever and no model.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DATASET = HERE / "questions.jsonl"
sys.path.insert(0, str(ROOT))

from eval.dataset import load_dataset  # noqa: E402
from eval.paraphrase import shared_words  # noqa: E402
from ingestion.parsers import parse_document  # noqa: E402

try:
    from eval.metrics import normalize_passage
except Exception:  # pragma: no cover - only if eval.metrics cannot be imported mid-edit

    def normalize_passage(text: str) -> str:
        return " ".join(text.split()).casefold()


def plain_normalize(text: str) -> str:
    """Whitespace and case only: a gold passage must match this way too, so that it does not depend on
    how eval.metrics treats table labels."""
    return " ".join(text.split()).casefold()


def running_line_pages(name: str, data: bytes) -> list[str] | None:
    """Page texts as the indexer stores them (running heads and feet blanked), or None if unavailable."""
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


def raw_pages(data: bytes) -> list[str] | None:
    try:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(data)
        try:
            texts = []
            for page in pdf:
                textpage = page.get_textpage()
                texts.append(textpage.get_text_range().replace("\x02", "-").replace("\ufffe", "-"))
                textpage.close()
                page.close()
            return texts
        finally:
            pdf.close()
    except Exception:
        return None


def document_key(row_id: str) -> str:
    return row_id.split("-", 1)[0]


def main() -> int:
    dataset = load_dataset(DATASET)
    raw_rows = {}
    for line in DATASET.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            row = json.loads(line)
            raw_rows[row["id"]] = row

    missing = [doc for doc in dataset.documents if not doc.exists()]
    if missing:
        for doc in missing:
            print(f"MISSING {doc}")
        print("Run: .venv/bin/python eval/datasets/real_documents/fetch.py  (the shared ones come with ../shared/)")
        return 1

    pages: dict[str, list[str]] = {}
    stored: dict[str, list[str] | None] = {}
    raw: dict[str, list[str] | None] = {}
    page_counts: dict[str, int] = {}
    for doc in dataset.documents:
        data = doc.read_bytes()
        parsed = parse_document(doc.name, data)
        pages[doc.name] = [page.text for page in parsed.pages]
        page_counts[doc.name] = len(parsed.pages)
        stored[doc.name] = running_line_pages(doc.name, data)
        raw[doc.name] = raw_pages(data)

    failures: list[str] = []
    warnings: list[str] = []
    by_doc: dict[str, Counter] = defaultdict(Counter)
    traps: Counter = Counter()
    paraphrased = paraphrased_new = 0
    old_ids = {q.id for q in load_dataset(ROOT / "eval/datasets/grounded/pdfs.jsonl").questions}

    for q in dataset.questions:
        row = raw_rows[q.id]
        key = document_key(q.id)
        by_doc[key][q.category] += 1
        if q.category != "answerable":
            if q.gold or q.reference is not None:
                failures.append(f"{q.id}: a {q.category} row must have no reference and no gold")
            if q.category == "unanswerable":
                if not row.get("trap"):
                    failures.append(f"{q.id}: unanswerable row without a trap")
                traps[row.get("trap") or "?"] += 1
            continue
        if not q.reference or not q.gold:
            failures.append(f"{q.id}: answerable row without reference or gold")
            continue
        table = bool(row.get("table"))
        for gold in q.gold:
            if gold.source not in pages:
                failures.append(f"{q.id}: gold source {gold.source} is not a document of the set")
                continue
            if gold.page is None or not 1 <= gold.page <= page_counts[gold.source]:
                failures.append(f"{q.id}: page {gold.page} outside {gold.source}")
                continue
            page = pages[gold.source][gold.page - 1]
            text = normalize_passage(gold.text or "")
            if not text or text not in normalize_passage(page):
                failures.append(f"{q.id}: gold text not on {gold.source} p{gold.page}: {gold.text!r}")
                continue
            if plain_normalize(gold.text or "") not in plain_normalize(page):
                message = f"{q.id}: gold text not on {gold.source} p{gold.page} by whitespace/case alone"
                if q.id in old_ids:  # grounded-pdfs rows are kept unchanged; their README names these
                    warnings.append(message + " (kept from grounded-pdfs: matches only without table labels)")
                else:
                    failures.append(message)
            kept = stored[gold.source]
            if kept is not None and text not in normalize_passage(kept[gold.page - 1]):
                warnings.append(f"{q.id}: gold passage is blanked as a running line at ingest")
            plain = raw[gold.source]
            if plain is not None and text not in normalize_passage(plain[gold.page - 1]):
                warnings.append(
                    f"{q.id}: gold passage not in raw PDFium text (parser-specific{', table' if table else ''})"
                )
        references = [normalize_passage(r) for r in q.all_references]
        if table:
            where = " ".join(
                normalize_passage(pages[g.source][g.page - 1]) for g in q.gold if g.source in pages and g.page
            )
        else:
            where = " ".join(normalize_passage(g.text or "") for g in q.gold)
        if not any(r and r in where for r in references):
            failures.append(f"{q.id}: no reference occurs in its {'gold page' if table else 'gold text'}")
        if row.get("paraphrased"):
            paraphrased += 1
            paraphrased_new += q.id not in old_ids
            overlap = set().union(*(shared_words(q.question, g.text or "") for g in q.gold))
            if overlap:
                failures.append(f"{q.id}: marked paraphrased but shares {sorted(overlap)} with its gold")

    # ---- report
    print(f"{dataset.name}: {len(dataset.questions)} questions over {len(dataset.documents)} documents")
    print()
    print("documents:")
    for doc in dataset.documents:
        print(f"  {doc.name:40s} {page_counts[doc.name]:4d} pages")
    print()
    cats = ["answerable", "unanswerable", "out-of-scope"]
    print(f"  {'prefix':12s}" + "".join(f"{c:>14s}" for c in cats) + f"{'total':>8s}")
    totals: Counter = Counter()
    for key in sorted(by_doc, key=lambda k: (k == "oos", k)):
        counts = by_doc[key]
        totals.update(counts)
        print(f"  {key:12s}" + "".join(f"{counts[c]:14d}" for c in cats) + f"{sum(counts.values()):8d}")
    print(f"  {'total':12s}" + "".join(f"{totals[c]:14d}" for c in cats) + f"{sum(totals.values()):8d}")
    new = [q for q in dataset.questions if q.id not in old_ids]
    new_counts = Counter(q.category for q in new)
    print()
    print(
        f"new rows: {len(new)} ({new_counts['answerable']} answerable, {new_counts['unanswerable']} unanswerable, "
        f"{new_counts['out-of-scope']} out-of-scope); kept from grounded-pdfs: {len(old_ids)}"
    )
    print(f"paraphrased (no content word shared with gold): {paraphrased} ({paraphrased_new} of the new answerable)")
    print("traps:", ", ".join(f"{t} {n}" for t, n in traps.most_common()))
    table_rows = sum(1 for q in dataset.questions if raw_rows[q.id].get("table"))
    print(f"table rows: {table_rows}")
    if warnings:
        print()
        print(f"{len(warnings)} warning(s):")
        for w in warnings:
            print("  " + w)
    print()
    if failures:
        print(f"FAILED: {len(failures)} problem(s)")
        for f in failures:
            print("  " + f)
        return 1
    print("OK: every gold passage is on its page and every reference is backed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
