"""Train the lasting-fact gate (memory/lasting_gate.py) on eval/datasets/memory_lasting, and measure
the alternative it was chosen over.

    .venv/bin/python -m scripts.train_lasting_gate                                # cross-validate, write
    .venv/bin/python -m scripts.train_lasting_gate --check --model qwen2.5-coder-1.5b

The gate: a logistic regression on the packaged MiniLM's vectors of each candidate line and of its
message, side by side, scored by stratified cross-validation (the line's vector alone is scored
too). With --model, the same lines are put to that packaged llama.cpp model as a yes-or-no question
(MODEL_PROMPT, one token, P(Yes); memory/yes_no.py). Printed for each: the ROC AUC and the precision /
recall of the *not lasting* class (the lines the gate drops) at several thresholds. The memory dev
set is not read here: bench/memory_judgment.py measures the whole memory pass on it.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.answerability_signals import auc
from core.settings import PROJECT_ROOT, get_settings
from memory.lasting_gate import LASTING_WEIGHTS
from memory.yes_no import yes_probability
from providers.embedder import Embedder
from scripts.memory_gates import packaged_llm, write_gate
from scripts.train_fact_gate import scores as rates
from scripts.train_router import cross_validated, load

DATA = PROJECT_ROOT / "eval" / "datasets" / "memory_lasting" / "lines.jsonl"
THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
MODEL_PROMPT = (
    "An assistant keeps a long-term memory of facts about a user and the user's company and reads it in every "
    "later conversation. You get a message the user wrote and a line the assistant may add to that memory. Is "
    "the line a lasting fact worth keeping, still true and useful weeks from now: a name, role, team, place, "
    "routine, standing preference about answers, or a fact, policy or decided plan of the company? Moods, "
    "thanks, greetings, opinions about one thing, guesses, possibilities, undecided plans, and what is true "
    "only today, this week or for now are not. Answer Yes or No."
)


def measured(p_lasting: np.ndarray, lasting: np.ndarray) -> dict[str, object]:
    return {
        "roc_auc": round(auc(list(p_lasting[lasting]), list(p_lasting[~lasting])), 3),
        "dropped_below": {str(t): rates(~lasting, p_lasting < t, "not_lasting") for t in THRESHOLDS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report only; write nothing")
    parser.add_argument("--model", help="also ask this packaged llama.cpp model, for comparison")
    args = parser.parse_args()
    settings = get_settings()
    rows = load(DATA)
    lasting = np.array([bool(r["lasting"]) for r in rows])
    embedder = Embedder(settings)
    lines = np.asarray(embedder.embed([r["line"] for r in rows]), dtype=np.float32)
    x = np.hstack([lines, np.asarray(embedder.embed([r["message"] for r in rows]), dtype=np.float32)])
    threshold = settings.memory_lasting_threshold
    cross = cross_validated(x, lasting)
    report = {
        "train": str(DATA.relative_to(PROJECT_ROOT)),
        "rows": len(rows),
        "threshold": threshold,
        "cross_validation": rates(~lasting, cross < threshold, "not_lasting"),
    }
    alone = measured(cross_validated(lines, lasting), lasting)
    print(json.dumps({**report, "line_and_message": measured(cross, lasting), "line_alone": alone}, indent=1))
    if not args.check:
        write_gate(x, lasting, LASTING_WEIGHTS, report)
    if args.model:
        llm = packaged_llm(settings, args.model)
        asked = [yes_probability(llm, MODEL_PROMPT, f"Message: {r['message']}\nLine: {r['line']}") for r in rows]
        print(json.dumps({args.model: measured(np.array(asked), lasting)}, indent=1))


if __name__ == "__main__":
    main()
