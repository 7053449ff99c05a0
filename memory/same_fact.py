"""Does a new memory line restate a stored one in other words ("The company's HQ is in Aarhus." /
"The company's head office is in Aarhus.")? Then nothing is written.

Neither the embeddings nor the word rules of memory/dedup.py tell a rewording from a change (with
MiniLM, "junior accountant" / "senior accountant" is closer than "HQ" / "head office"), and the 1.5B,
asked whether two lines state the same fact, finds only 0.29 of the restatements. Asked the question
it knows better, whether one statement implies the other, in both directions, its mean P(Yes) ranks
restatements above changes at ROC AUC 0.964 (scripts/train_same_fact.py on eval/datasets/memory_same,
written for it without reading the memory dev set). The threshold is per model and set for precision:
a false "same" loses an update, a false "not same" only swaps a line for its rewording (the old one
goes to the file's history). A model nobody calibrated leaves the decision to memory/extractor.py's
`relation`.
"""

from __future__ import annotations

from memory.yes_no import calibrated_threshold, yes_probability
from providers.llm.base import LLM

ENTAILS_PROMPT = (
    "You get two statements, A and B. If A is true, must B also be true (B says nothing that A does not)? "
    "Answer Yes or No."
)


def same_probability(llm: LLM, old: str, new: str) -> float:
    """The mean P(Yes) of "old implies new" and "new implies old". Raises LLMError."""
    forward = yes_probability(llm, ENTAILS_PROMPT, f"A: {old}\nB: {new}")
    backward = yes_probability(llm, ENTAILS_PROMPT, f"A: {new}\nB: {old}")
    return (forward + backward) / 2


def same_threshold(llm: LLM, thresholds: dict[str, float]) -> float | None:
    """The model's calibrated threshold; 1.0 (both directions "Yes") for a model that answers in JSON."""
    return calibrated_threshold(llm, thresholds, for_json=1.0)
