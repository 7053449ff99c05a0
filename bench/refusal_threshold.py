"""Could the retrieval threshold alone refuse SQuAD 2.0's unanswerable questions? (issue #8)

The answerer refuses without calling the LLM when the best chunk's cosine similarity is below
`RAGCHAT_MIN_RELEVANCE` (0.25). This indexes the SQuAD "Normans" article into a temporary home, runs
the real hybrid search for all 208 questions (no LLM) and prints, for a sweep of thresholds, the share
of unanswerable questions it would refuse and of answerable ones it would wrongly refuse.

    .venv/bin/python bench/refusal_threshold.py [--squad DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from eval.dataset import load_dataset
from ragchat.service import RagService
from ragchat.settings import get_settings

THRESHOLDS = (0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, default=get_settings().eval_squad_dir)
    args = parser.parse_args()
    questions_file = args.squad / "questions.jsonl"
    if not questions_file.is_file():
        print(f"SQuAD data not found in {args.squad}: nothing to measure.")
        return 0
    dataset = load_dataset(questions_file)
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-") as home:
        service = RagService(get_settings(home=Path(home)))
        service.ingest_paths(dataset.documents)
        best: dict[bool, list[float]] = {True: [], False: []}
        for question in dataset.questions:
            hits = service.search(question.question).hits
            best[question.answerable].append(max((h.scores.dense or 0.0) for h in hits) if hits else 0.0)
    answerable, unanswerable = best[True], best[False]
    print(f"{dataset.name}: {len(answerable)} answerable, {len(unanswerable)} unanswerable questions")
    for label, values in (("answerable", answerable), ("unanswerable", unanswerable)):
        quartiles = statistics.quantiles(values, n=4)
        print(f"  best-chunk cosine, {label:<12} median {statistics.median(values):.3f}, "
              f"quartiles {quartiles[0]:.3f} / {quartiles[2]:.3f}, min {min(values):.3f}, max {max(values):.3f}")
    print("\n  threshold | unanswerable refused | answerable wrongly refused")
    for threshold in THRESHOLDS:
        refused = sum(v < threshold for v in unanswerable) / len(unanswerable)
        false = sum(v < threshold for v in answerable) / len(answerable)
        print(f"  {threshold:9.2f} | {refused:20.3f} | {false:26.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
