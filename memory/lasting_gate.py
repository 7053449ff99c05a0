"""Is a line the memory would write a lasting fact, or a mood, a hedge, a one-off?

The extraction prompt already says what is not lasting, yet the 1.5B, asked for a JSON list, writes
"The user is frustrated with a spreadsheet." or "The user might move to Valencia." for such messages.
The line it wrote is judged again, beside the message it came from: a logistic regression on the
packaged MiniLM's vectors of the two, side by side (scripts/train_lasting_gate.py, trained on
eval/datasets/memory_lasting, written for it without reading the memory dev set). Cross-validated, it
ranks lasting lines above the rest at ROC AUC 0.909 (the line's vector alone 0.875, the message's
0.876), where the 1.5B's own P(Yes) to the same question reaches 0.695 and says "Yes" to nearly all.
The threshold is set for precision: a line dropped is a fact lost, a line kept is shown in the reply
and can be undone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from memory.fact_gate import GateWeights

LASTING_WEIGHTS = Path(__file__).with_name("lasting_weights.json")
NOT_LASTING = "it is not a lasting fact: a mood, a maybe, or true only for now"


class LastingGate:
    def __init__(self, embed: Callable[[list[str]], list[list[float]]], threshold: float) -> None:
        self._embed, self._threshold = embed, threshold
        self._weights = GateWeights.load(LASTING_WEIGHTS)

    def probability(self, message: str, line: str) -> float:
        line_vector, message_vector = np.asarray(self._embed([line, message]), dtype=np.float32)
        return float(self._weights.probability(np.concatenate([line_vector, message_vector])[None, :])[0])

    def dropped(self, message: str, line: str) -> bool:
        return self.probability(message, line) < self._threshold
