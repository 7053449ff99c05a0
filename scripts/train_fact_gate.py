"""Train the memory gate (memory/fact_gate.py) and report how well it does.

    .venv/bin/python -m scripts.train_fact_gate            # cross-validate, test, write memory/fact_gate_weights.json
    .venv/bin/python -m scripts.train_fact_gate --check    # report only

Trained on eval/datasets/memory_gate/train.jsonl (its own set); scored by stratified k-fold
cross-validation on it, and on the frozen memory dev set (eval/datasets/memory/messages.jsonl, never
trained on), where a message holds a fact when it expects a line, replaces one, or restates one.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from core.linear_probe import fit
from core.settings import PROJECT_ROOT, get_settings
from memory.fact_gate import WEIGHTS_PATH, GateWeights
from providers.embedder import Embedder

TRAIN = PROJECT_ROOT / "eval" / "datasets" / "memory_gate" / "train.jsonl"
DEV = PROJECT_ROOT / "eval" / "datasets" / "memory" / "messages.jsonl"
L2 = 1e-3
FOLDS = 5
SEED = 7


def load(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def scores(truth: np.ndarray, predicted: np.ndarray, label: str = "fact") -> dict[str, float]:
    """Precision and recall of the `label` class, and accuracy."""
    tp = int(np.sum(truth & predicted))
    return {
        f"{label}_precision": round(tp / max(int(predicted.sum()), 1), 3),
        f"{label}_recall": round(tp / max(int(truth.sum()), 1), 3),
        "accuracy": round(float(np.mean(truth == predicted)), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report only; write nothing")
    args = parser.parse_args()
    settings = get_settings()
    threshold = settings.memory_gate_threshold
    embedder = Embedder(settings)
    train = load(TRAIN)
    x = np.asarray(embedder.embed([r["text"] for r in train]), dtype=np.float32)
    y = np.array([r["holds_fact"] for r in train])
    rng = np.random.default_rng(SEED)
    fold = np.empty(len(y), dtype=int)
    for value in (True, False):
        where = rng.permutation(np.flatnonzero(y == value))
        fold[where] = np.arange(len(where)) % FOLDS
    p = np.zeros(len(y))
    for k in range(FOLDS):
        w, b = fit(x[fold != k], y[fold != k], L2)
        p[fold == k] = GateWeights(w, b).probability(x[fold == k])
    w, b = fit(x, y, L2)
    weights = GateWeights(w, b)
    dev = load(DEV)
    dev_truth = np.array([bool(r["expected"] or r.get("replaces") or r["category"] == "restatement") for r in dev])
    dev_p = weights.probability(np.asarray(embedder.embed([r["message"] for r in dev]), dtype=np.float32))
    report = {
        "train": str(TRAIN.relative_to(PROJECT_ROOT)),
        "messages": len(train),
        "threshold": threshold,
        "cross_validation": {"folds": FOLDS, **scores(y, p >= threshold)},
        "memory_dev_set": {"messages": len(dev), **scores(dev_truth, dev_p >= threshold)},
    }
    print(json.dumps(report, indent=1))
    for row, truth, prob in zip(dev, dev_truth, dev_p, strict=True):
        if truth != (prob >= threshold):
            print(f"  dev wrong ({row['category']}, p={prob:.2f}): {row['message']}")
    if not args.check:
        weights.save(WEIGHTS_PATH, report)
        print(f"wrote {WEIGHTS_PATH.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    main()
