"""Does moving misplaced citation markers help? Re-checks the answers of a saved evaluation report
with and without the marker correction in rag/citations.py, on the same sources, without an LLM.

The report holds each answer's text with the markers the model wrote (after validation) and the ids of
the evidence the model was given, in prompt order (`given`, from `Answer.given`); the documents are
indexed again and those chunks read back by id. A report written before `given` existed has none:
re-run `ragchat eval` first. Prints citation precision and "citation covers the gold
passage" for the answered, answerable questions, before and after.

    .venv/bin/python bench/citation_repair.py                      # reports/eval.json (starter set)
    .venv/bin/python bench/citation_repair.py --report reports/squad2-normans/eval.json \\
        --dataset ../shared/data/squad2-normans/questions.jsonl
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from unittest import mock

from core.schemas import Hit, Scores
from core.settings import PROJECT_ROOT, get_settings
from eval import metrics
from eval.dataset import STARTER_DATASET, load_dataset
from rag import citations
from ragchat.application import open_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", type=Path, default=PROJECT_ROOT / "reports" / "eval.json")
    parser.add_argument("--dataset", type=Path, default=STARTER_DATASET)
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    dataset = load_dataset(args.dataset)
    questions = {q.id: q for q in dataset.questions}
    with tempfile.TemporaryDirectory() as home:
        settings = get_settings(home=Path(home), reranker_model="none")
        session = open_session(settings)
        rules = citations.CitationRules.from_settings(settings)
        for result in session.ingest_paths(dataset.documents):
            assert result.status == "indexed", result
        rows = {"before": [], "after": []}
        skipped = moved = 0
        for stored in report["questions"]:
            question = questions.get(stored["id"])
            if question is None or stored["refused"] or not question.answerable or not stored["citations"]:
                continue
            ids = stored.get("given", [])
            found = session.document_index.store.get(ids)
            if not ids or len(found) != len(ids):
                skipped += 1
                continue
            hits = [Hit(chunk=found[chunk_id][0], scores=Scores()) for chunk_id in ids]
            by_id = {h.chunk.chunk_id: h.chunk for h in hits}
            with mock.patch.object(citations, "_correct_markers", lambda text, _hits, _rules: (text, {})):
                _, before = citations.resolve_citations(stored["answer"], hits, rules)
            _, after = citations.resolve_citations(stored["answer"], hits, rules)
            moved += sum(c.method == "corrected" for c in after)
            for label, cited in (("before", before), ("after", after)):
                chunks = [by_id[c.chunk_id] for c in cited]
                recall = metrics.citation_recall(chunks, question.gold)
                precision = metrics.citation_precision(chunks, question.gold, question.all_references)
                rows[label].append((precision, None if recall is None else float(recall == 1.0)))
    print(
        f"report: {args.report}  answered answerable questions checked: {len(rows['after'])}"
        f"  skipped (no given evidence in the report, or not found): {skipped}  markers moved: {moved}"
    )
    for label, values in rows.items():
        precision = metrics.mean(p for p, _ in values)
        covers = metrics.mean(c for _, c in values)
        print(f"{label:>6}: citation precision {precision:.2f}   citation covers gold {covers:.2f}")


if __name__ == "__main__":
    main()
