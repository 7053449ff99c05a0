"""Does moving misplaced citation markers help? Re-checks the answers of a saved evaluation report
with and without the marker correction in rag/citations.py, on the same sources, without an LLM.

The report holds each answer's text with the markers the model wrote (after validation). The sources
given to the model are rebuilt by running the same retrieval for the stored search query (the
answerer's threshold and context budget included); a question whose stored citations do not match the
rebuilt sources is counted and skipped. Prints citation precision and "citation covers the gold
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

from eval import metrics
from eval.dataset import STARTER_DATASET, load_dataset
from rag import citations
from rag.context_budget import fit_hits, source_budget
from rag.prompting import SYSTEM_PROMPT
from ragchat.service import RagService
from ragchat.settings import PROJECT_ROOT, get_settings


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
        service = RagService(settings)
        for result in service.ingest_paths(dataset.documents):
            assert result.status == "indexed", result
        rows = {"before": [], "after": []}
        skipped = moved = 0
        for stored in report["questions"]:
            question = questions.get(stored["id"])
            if question is None or stored["refused"] or not question.answerable or not stored["citations"]:
                continue
            retrieval = service.search(stored["search_query"], settings.top_k)
            relevant = [h for h in retrieval.hits if (h.scores.dense or 0.0) >= settings.min_relevance]
            fixed = SYSTEM_PROMPT + stored["question"] + stored["search_query"]
            hits = fit_hits(
                relevant, source_budget(settings.llm_context, settings.llm_max_tokens, fixed, settings.context_tokens)
            )
            ids = [h.chunk.chunk_id for h in hits]
            if any(c["marker"] > len(ids) or ids[c["marker"] - 1] != c["chunk_id"] for c in stored["citations"]):
                skipped += 1
                continue
            by_id = {h.chunk.chunk_id: h.chunk for h in hits}
            with mock.patch.object(citations, "_correct_markers", lambda text, _hits: (text, {})):
                _, before = citations.resolve_citations(stored["answer"], hits)
            _, after = citations.resolve_citations(stored["answer"], hits)
            moved += sum(c.method == "corrected" for c in after)
            for label, cited in (("before", before), ("after", after)):
                chunks = [by_id[c.chunk_id] for c in cited]
                recall = metrics.citation_recall(chunks, question.gold)
                precision = metrics.citation_precision(chunks, question.gold, question.all_references)
                rows[label].append((precision, None if recall is None else float(recall == 1.0)))
    print(
        f"report: {args.report}  answered answerable questions checked: {len(rows['after'])}"
        f"  skipped (sources could not be rebuilt): {skipped}  markers moved: {moved}"
    )
    for label, values in rows.items():
        precision = metrics.mean(p for p, _ in values)
        covers = metrics.mean(c for _, c in values)
        print(f"{label:>6}: citation precision {precision:.2f}   citation covers gold {covers:.2f}")


if __name__ == "__main__":
    main()
