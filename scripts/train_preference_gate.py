"""Train the standing-preference gate (memory/preference_gate.py): does a message state how the user
wants to be answered from now on ("Numbers in thousands work best for me", "always quote the clause")?

    .venv/bin/python -m scripts.train_preference_gate            # cross-validate, write the weights
    .venv/bin/python -m scripts.train_preference_gate --check    # report only

Its examples come from two sets written without reading the memory dev set: eval/datasets/memory_gate
(24 standing preferences about answers, 12 one-off requests about the current answer, and the
messages that hold no fact) and eval/datasets/memory_lasting (the messages of its answer-preference
and standing-instruction lines, and of its lines that are not lasting). A logistic regression on the
packaged MiniLM's vectors, scored by stratified cross-validation.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.answerability_signals import auc
from core.settings import PROJECT_ROOT, get_settings
from memory.preference_gate import PREFERENCE_WEIGHTS
from providers.embedder import Embedder
from scripts.memory_gates import write_gate
from scripts.train_fact_gate import scores as rates
from scripts.train_router import cross_validated, load

DATA = PROJECT_ROOT / "eval" / "datasets"
PREFERENCE_KINDS = {"answer_preference", "standing_instruction"}
STANDING_ROWS = 36  # memory_gate/train.jsonl ends with 24 standing preferences and 12 one-off requests
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)


def examples() -> tuple[list[str], np.ndarray]:
    gate = load(DATA / "memory_gate" / "train.jsonl")
    texts = [r["text"] for r in gate[-STANDING_ROWS:]]
    labels = [bool(r["holds_fact"]) for r in gate[-STANDING_ROWS:]]
    no_fact = [r["text"] for r in gate[:-STANDING_ROWS] if not r["holds_fact"]]
    texts, labels = texts + no_fact, labels + [False] * len(no_fact)
    for row in load(DATA / "memory_lasting" / "lines.jsonl"):
        if row["kind"] in PREFERENCE_KINDS or not row["lasting"]:
            texts.append(row["message"])
            labels.append(row["kind"] in PREFERENCE_KINDS)
    return texts, np.array(labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report only; write nothing")
    args = parser.parse_args()
    settings = get_settings()
    texts, truth = examples()
    x = np.asarray(Embedder(settings).embed(texts), dtype=np.float32)
    p = cross_validated(x, truth)
    threshold = settings.memory_preference_threshold
    report = {
        "train": "eval/datasets/memory_gate/train.jsonl, eval/datasets/memory_lasting/lines.jsonl",
        "messages": len(texts),
        "preferences": int(truth.sum()),
        "threshold": threshold,
        "roc_auc": round(auc(list(p[truth]), list(p[~truth])), 3),
        "cross_validation": rates(truth, p >= threshold, "preference"),
    }
    print(json.dumps(report, indent=1))
    for t in THRESHOLDS:
        print(f"  P >= {t}: {rates(truth, p >= t, 'preference')}")
    if not args.check:
        write_gate(x, truth, PREFERENCE_WEIGHTS, report)


if __name__ == "__main__":
    main()
