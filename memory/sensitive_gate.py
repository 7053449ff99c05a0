"""Health and other sensitive personal data go into the memory only when the user asks for it. Two
questions, each put where it is answered best (measured on eval/datasets/memory_sensitive, written for
them without reading the memory dev set):

- Is a line the memory would write ("The user is vegan.") sensitive: health, diet, disability,
  religion and the like? A question of topic: a logistic regression on the packaged MiniLM's vector of
  the line (scripts/train_sensitive_gate.py; cross-validated precision 0.98 at P >= 0.8).
- Does the message ask to remember, note or keep something? A speech act, which MiniLM's vectors do
  not separate (accuracy 0.79 at best) and which the 1.5B got wrong when asked for it in JSON. The
  probability the model gives "Yes" as the first token of a yes/no answer ranks it well (ROC AUC 0.91
  with the 1.5B). Asked only when the line is sensitive: one token, rarely.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.settings import Settings
from memory.fact_gate import GateWeights
from memory.yes_no import calibrated_threshold, yes_probability
from providers.llm.base import LLM, LLMError

SENSITIVE_WEIGHTS = Path(__file__).with_name("sensitive_weights.json")
WITHHELD = "health and other sensitive details are kept only when you ask me to remember them"
ASKED_PROMPT = (
    "You read one message a user wrote to an assistant. Does the message ask the assistant to remember, note, "
    "store or keep some information for later? A fact that is only stated is not such a request. Answer Yes or No."
)


@dataclass(frozen=True)
class MemoryGates:
    """The thresholds of the memory's gates (memory/fact_gate.py, memory/lasting_gate.py and this module's
    two), from settings."""

    fact: float
    sensitive: float
    asked: dict[str, float]  # model name → P(Yes) threshold
    lasting: float  # memory/lasting_gate.py
    same: dict[str, float]  # model name → threshold of memory/same_fact.py
    preference: float  # memory/preference_gate.py

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryGates:
        return cls(
            settings.memory_gate_threshold,
            settings.memory_sensitive_threshold,
            settings.memory_asked_thresholds,
            settings.memory_lasting_threshold,
            settings.memory_same_thresholds,
            settings.memory_preference_threshold,
        )

    def asked_threshold(self, llm: LLM) -> float | None:
        """The P(Yes) threshold for this model: its calibrated one, 0.5 for a yes-or-no JSON answer, None
        for a model with log-probabilities nobody calibrated (it then withholds nothing)."""
        return calibrated_threshold(llm, self.asked, for_json=0.5)


def asked_probability(llm: LLM, message: str) -> float:
    """P(the message asks to remember something), memory/yes_no.py. Raises LLMError."""
    return yes_probability(llm, ASKED_PROMPT, message)


class SensitiveGate:
    def __init__(
        self, embed: Callable[[list[str]], list[list[float]]], llm: Callable[[], LLM], gates: MemoryGates
    ) -> None:
        self._embed, self._llm, self._gates = embed, llm, gates
        self._sensitive = GateWeights.load(SENSITIVE_WEIGHTS)

    def withheld(self, message: str, line: str) -> bool:
        """Whether `line` is sensitive and `message` did not ask to remember it. A model that fails
        leaves the line written: it is shown in the reply and can be undone."""
        vector = np.asarray(self._embed([line]), dtype=np.float32)
        if self._sensitive.probability(vector)[0] < self._gates.sensitive:
            return False
        try:
            llm = self._llm()
            threshold = self._gates.asked_threshold(llm)
            return threshold is not None and asked_probability(llm, message) < threshold
        except LLMError:
            return False
