"""Does a message state how the user wants to be answered from now on?

The 1.5B lists no fact for most standing wishes given as commands ("from now on, …", "skip …"): 18 of
24 stated preferences of eval/datasets/memory_gate got a line, and prompt examples of such commands
did not move it. A message the model found nothing in is scored here, a logistic regression on the
packaged MiniLM's vector (scripts/train_preference_gate.py, trained on sets written without reading
the memory dev set); from the threshold on, the model is asked for that one wish as a line
(memory/extractor.py's `standing_wish`), which is checked like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from memory.fact_gate import GateWeights

PREFERENCE_WEIGHTS = Path(__file__).with_name("preference_weights.json")


class PreferenceGate:
    def __init__(self, embed: Callable[[list[str]], list[list[float]]], threshold: float) -> None:
        self._embed, self._threshold = embed, threshold
        self._weights = GateWeights.load(PREFERENCE_WEIGHTS)

    def probability(self, message: str) -> float:
        return float(self._weights.probability(np.asarray(self._embed([message]), dtype=np.float32))[0])

    def states_preference(self, message: str) -> bool:
        return self.probability(message) >= self._threshold
