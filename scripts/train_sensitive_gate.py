"""Train the sensitive-data gate's line classifier (memory/sensitive_gate.py) and measure both of its
questions on eval/datasets/memory_sensitive.

    .venv/bin/python -m scripts.train_sensitive_gate                # cross-validate, write the weights
    .venv/bin/python -m scripts.train_sensitive_gate --check        # report only
    .venv/bin/python -m scripts.train_sensitive_gate --check --asked-model qwen2.5-coder-1.5b

`sensitive`: a logistic regression on the packaged MiniLM's vectors of statements.jsonl, scored by
stratified cross-validation at memory_sensitive_threshold. `asked` (with --asked-model): the model's
P(Yes) on every message of requests.jsonl, as ROC AUC and precision / recall at several thresholds,
memory_asked_threshold among them. The memory dev set is not read here: bench/memory_judgment.py
measures the whole memory pass on it.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.answerability_signals import auc
from core.settings import PROJECT_ROOT, get_settings
from memory.sensitive_gate import SENSITIVE_WEIGHTS, asked_probability
from providers.embedder import Embedder
from scripts.memory_gates import packaged_llm, write_gate
from scripts.train_fact_gate import scores as rates
from scripts.train_router import cross_validated, load

DATA = PROJECT_ROOT / "eval" / "datasets" / "memory_sensitive"
ASKED_THRESHOLDS = (0.5, 0.7, 0.8, 0.85, 0.9, 0.95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report only; write nothing")
    parser.add_argument("--asked-model", help="also score requests.jsonl with this packaged llama.cpp model")
    args = parser.parse_args()
    settings = get_settings()
    rows = load(DATA / "statements.jsonl")
    x = np.asarray(Embedder(settings).embed([r["text"] for r in rows]), dtype=np.float32)
    y = np.array([bool(r["sensitive"]) for r in rows])
    predicted = cross_validated(x, y) >= settings.memory_sensitive_threshold
    report = {
        "train": str((DATA / "statements.jsonl").relative_to(PROJECT_ROOT)),
        "rows": len(rows),
        "threshold": settings.memory_sensitive_threshold,
        "cross_validation": rates(y, predicted, "sensitive"),
    }
    print(json.dumps(report, indent=1))
    if not args.check:
        write_gate(x, y, SENSITIVE_WEIGHTS, report)
    if args.asked_model:
        llm = packaged_llm(settings, args.asked_model)
        requests = load(DATA / "requests.jsonl")
        truth = np.array([bool(r["asked"]) for r in requests])
        scores = np.array([asked_probability(llm, r["text"]) for r in requests])
        roc_auc = auc(list(scores[truth]), list(scores[~truth]))
        print(f"asked, {args.asked_model}: ROC AUC {roc_auc:.3f} on {len(requests)} messages")
        for threshold in sorted({*ASKED_THRESHOLDS, *settings.memory_asked_thresholds.values()}):
            print(f"  P(Yes) >= {threshold}: {rates(truth, scores >= threshold, 'asked')}")


if __name__ == "__main__":
    main()
