"""Calibrate the memory's "same fact in other words" judgment (memory/same_fact.py) for a packaged
model on eval/datasets/memory_same, and measure the question it replaced.

    .venv/bin/python -m scripts.train_same_fact --model qwen2.5-coder-1.5b

For every pair: the mean P(Yes) of entailment both ways (same_probability), and the model's answer to
memory/extractor.py's `relation` ("same", "replaces", "separate"). Printed: the ROC AUC of the first,
the precision / recall of *same* at several thresholds (memory_same_thresholds' value for the model
among them), and how often `relation` says "same" for each kind of pair. The memory dev set is not
read here: bench/memory_judgment.py measures the whole memory pass on it.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.answerability_signals import auc
from core.settings import PROJECT_ROOT, get_settings
from memory.extractor import relation
from memory.same_fact import same_probability
from scripts.memory_gates import packaged_llm
from scripts.train_fact_gate import scores as rates
from scripts.train_router import load

DATA = PROJECT_ROOT / "eval" / "datasets" / "memory_same" / "pairs.jsonl"
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the packaged llama.cpp model")
    args = parser.parse_args()
    settings = get_settings()
    llm = packaged_llm(settings, args.model)
    rows = load(DATA)
    same = np.array([bool(r["same"]) for r in rows])
    p = np.array([same_probability(llm, r["old"], r["new"]) for r in rows])
    said_same = np.array([relation(llm, r["old"], r["new"]) == "same" for r in rows])
    chosen = {t for name, t in settings.memory_same_thresholds.items() if name in args.model}
    report = {
        "model": args.model,
        "pairs": len(rows),
        "entailment_roc_auc": round(auc(list(p[same]), list(p[~same])), 3),
        "entailment_same_at": {str(t): rates(same, p >= t, "same") for t in sorted({*THRESHOLDS, *chosen})},
        "relation_says_same": rates(same, said_same, "same"),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
