"""What the memory gates' training scripts share: writing a gate's weights, and loading a packaged
model to compare against or to calibrate."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.linear_probe import fit
from core.settings import PROJECT_ROOT, Settings
from memory.fact_gate import GateWeights
from providers.llm.base import LLM
from scripts.train_router import L2


def write_gate(vectors: np.ndarray, truth: np.ndarray, path: Path, report: dict[str, object]) -> None:
    """Fit the logistic regression on all of the examples and save it to `path` with its report."""
    w, b = fit(vectors, truth, L2)
    GateWeights(w, b).save(path, report)
    print(f"wrote {path.relative_to(PROJECT_ROOT)}")


def packaged_llm(settings: Settings, model: str) -> LLM:
    """The packaged llama.cpp model `model`, loaded as the app loads it."""
    from ragchat.application import App

    return App(settings.model_copy(update={"llm_provider": "llamacpp", "llm_model": model})).llm()
