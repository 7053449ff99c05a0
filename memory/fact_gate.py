"""The memory gate: does a message hold a lasting fact at all? A logistic regression on the packaged
MiniLM's sentence vectors, trained on eval/datasets/memory_gate (scripts/train_fact_gate.py).

It runs before the memory model (one embedding, milliseconds) so that a question about the documents,
a greeting or a mood costs no model call: the 0.5B, asked about "What does the report say about
revenue?", writes "The user's report says about revenue." It is set to let through what may be a
fact (the threshold favours recall); the model and the checks after it decide what is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.linear_probe import probability

WEIGHTS_PATH = Path(__file__).with_name("fact_gate_weights.json")


@dataclass(frozen=True)
class GateWeights:
    weights: np.ndarray
    bias: float

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> GateWeights:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(np.asarray(data["weights"], dtype=np.float32), float(data["bias"]))

    def save(self, path: Path, report: dict[str, object]) -> None:
        data = {"bias": round(self.bias, 6), "weights": [round(float(w), 6) for w in self.weights], "report": report}
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def probability(self, vectors: np.ndarray) -> np.ndarray:
        return probability(vectors, self.weights, self.bias)


class FactGate:
    def __init__(self, embed: Callable[[list[str]], list[list[float]]], threshold: float) -> None:
        self._embed = embed
        self._threshold = threshold
        self._weights = GateWeights.load()

    def probability(self, message: str) -> float:
        return float(self._weights.probability(np.asarray(self._embed([message])))[0])

    def holds_fact(self, message: str) -> bool:
        return self.probability(message) >= self._threshold
