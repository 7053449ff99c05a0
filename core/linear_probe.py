"""A logistic regression over L2-normalised sentence vectors: the small classifiers that decide by
meaning on the packaged embedder's vectors (rag/router.py: document-level request or passage;
memory/fact_gate.py: does a message hold a lasting fact). Each keeps its own weights file."""

from __future__ import annotations

import numpy as np


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / (np.linalg.norm(vectors, axis=-1, keepdims=True) + 1e-9)


def fit(
    vectors: np.ndarray, labels: np.ndarray, l2: float, steps: int = 3000, rate: float = 0.5
) -> tuple[np.ndarray, float]:
    """Logistic regression by full-batch gradient descent (a few hundred examples: milliseconds);
    `labels` 1 for the positive class. Returns (weights, bias)."""
    x = normalise(vectors).astype(np.float64)
    y = labels.astype(np.float64)
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        grad = p - y
        w -= rate * (x.T @ grad / len(y) + l2 * w)
        b -= rate * grad.mean()
    return w.astype(np.float32), float(b)


def probability(vectors: np.ndarray, weights: np.ndarray, bias: float) -> np.ndarray:
    """P(positive class) for each vector."""
    return 1.0 / (1.0 + np.exp(-(normalise(vectors) @ weights + bias)))
