"""Retrieval on real documents, without the model: does a question's gold passage reach the model?

Indexes the documents of a question set (default: eval/datasets/real_documents, fetched by its
fetch.py) in a home of its own, then for each answerable question runs the retrieval a question gets
(`Session.search`, the pipeline's one door) and the evidence selection after it, and records:

- hit@4: a gold passage is in one of the top 4 chunks (the `hit_rate` of `ragchat eval`);
- hit@candidates: it is anywhere among the fused candidates (what a wider pool could still reach);
- evidence: a reference answer occurs in the evidence the model would be given;
- the rank of the first gold chunk among the candidates;
- where a reference answer is lost, when the evidence does not hold one: not among the fused
  candidates, not among the chunks evidence is picked from, under the relevance gate, or dropped by
  the sentence picker.

Settings can be overridden (`--set fusion=rrf --set evidence_candidates=12`) to measure one lever at a
time; a lever that changes what is indexed needs its own `--home`. No LLM runs, unless `--translate`:
then a question over documents in another language is searched again with the model's translations,
as the answer path does (rag/query_translation.py).

    .venv/bin/python bench/real_documents_retrieval.py --home /tmp/rd-home --label today
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.setting_overrides import setting_overrides
from core.schemas import Hit, MemoryFacts
from core.settings import get_settings
from eval.dataset import EvalQuestion, load_dataset
from eval.metrics import is_relevant, normalize_answer
from rag.stages import SearchOptions, readable
from ragchat.application import open_session
from ragchat.session import Session

DATASET = Path(__file__).resolve().parents[1] / "eval" / "datasets" / "real_documents" / "questions.jsonl"
TOP = 4


def holds_reference(hits: list[Hit], question: EvalQuestion) -> bool:
    text = f" {normalize_answer(' '.join(h.chunk.text for h in hits))} "
    return any(f" {normalize_answer(r)} " in text for r in question.all_references if normalize_answer(r))


def measure(session: Session, question: EvalQuestion, translate: bool = False) -> dict[str, object]:
    retrieval = session.search(question.question)
    translated = ""
    if translate:  # as a question gets it: searched again with its translations (the model writes them)
        lang = session.retrieve.detect(question.question)
        retrieval, translated = session.pipeline.translate.run(question.question, lang, retrieval, SearchOptions(), {})
    candidates = [h.chunk for h in retrieval.candidates]
    rank = next((n for n, chunk in enumerate(candidates, 1) if is_relevant(chunk, question.gold)), None)
    evidence = session.pipeline.select_evidence.run(
        question.question, question.question, retrieval, MemoryFacts(), translated
    )
    settings = session.settings
    pool = readable(retrieval.candidates, max(len(retrieval.hits), settings.evidence_candidates))
    gated = [h for h in pool if (h.scores.dense or 0.0) >= settings.refusal_threshold]
    held = holds_reference(evidence, question)
    stages = (("candidates", retrieval.candidates), ("pool", pool), ("gate", gated))
    lost_at = None if held else next((s for s, hits in stages if not holds_reference(hits, question)), "picker")
    return {
        "id": question.id,
        "document": question.gold[0].source if question.gold else "",
        "hit4": any(is_relevant(h.chunk, question.gold) for h in retrieval.hits[:TOP]),
        "hit_candidates": rank is not None,
        "rank": rank,
        "evidence": held,
        "search_ms": retrieval.timings_ms.get("search_ms", 0.0),
        "lost_at": lost_at,
        "translated": translated,
    }


def summary(rows: list[dict[str, object]]) -> dict[str, float]:
    n = len(rows) or 1
    return {
        "questions": len(rows),
        "hit4": round(sum(bool(r["hit4"]) for r in rows) / n, 3),
        "hit_candidates": round(sum(bool(r["hit_candidates"]) for r in rows) / n, 3),
        "evidence": round(sum(bool(r["evidence"]) for r in rows) / n, 3),
        "mrr": round(sum(1 / rank for r in rows if isinstance(rank := r["rank"], int) and rank) / n, 3),
    }


def _line(name: str, s: dict[str, float]) -> str:
    return f"{name:48} {s['questions']:>4} {s['hit4']:>6} {s['hit_candidates']:>7} {s['evidence']:>6} {s['mrr']:>6}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--home", type=Path, required=True, help="RAGCHAT_HOME to index into (reused if indexed)")
    parser.add_argument("--set", action="append", default=[], help="a setting override, name=value")
    parser.add_argument("--label", default="run")
    parser.add_argument("--json", type=Path, help="write the per-question rows here")
    parser.add_argument("--translate", action="store_true", help="translate as the answer path does (model calls)")
    args = parser.parse_args()
    overrides = setting_overrides(args.set)
    dataset = load_dataset(args.dataset)
    missing = [d for d in dataset.documents if not d.exists()]
    if missing:
        sys.exit(f"missing documents (run eval/datasets/real_documents/fetch.py): {', '.join(map(str, missing))}")
    session = open_session(get_settings(home=args.home, **overrides))
    started = time.perf_counter()
    results = session.ingest_paths(list(dataset.documents))
    failed = [r for r in results if r.status == "failed"]
    if failed:
        sys.exit(f"ingest failed: {[(r.source, r.error) for r in failed]}")
    ingest_s = time.perf_counter() - started
    rows = [measure(session, q, args.translate) for q in dataset.questions if q.answerable and q.gold]
    by_document: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_document[str(row["document"])].append(row)
    print(f"# {args.label}: {json.dumps(overrides)} (ingest {ingest_s:.0f} s)")
    print(f"{'document':48} {'n':>4} {'hit@4':>6} {'hit@all':>7} {'evid.':>6} {'mrr':>6}")
    for document, group in sorted(by_document.items()):
        print(_line(document[:48], summary(group)))
    s = summary(rows)
    print(_line("ALL", s))
    lost = Counter(str(r["lost_at"]) for r in rows if r["lost_at"])
    print("reference answer lost at: " + ", ".join(f"{stage} {n}" for stage, n in lost.most_common()))
    if args.json:
        args.json.write_text(json.dumps({"label": args.label, "overrides": overrides, "summary": s, "rows": rows}))


if __name__ == "__main__":
    main()
