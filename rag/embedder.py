"""Text embeddings with fastembed. The default model is the packaged int8 all-MiniLM-L6-v2, loaded
from a local folder; another fastembed model name is downloaded by fastembed only when the user
names it (RAGCHAT_EMBED_MODEL), never as a silent fallback."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rag.packaged_models import PACKAGED_EMBEDDER_NAME, ensure_embedder_folder
from ragchat.settings import Settings


class Embedder:
    def __init__(self, settings: Settings) -> None:
        from fastembed import TextEmbedding

        folder: Path | None = settings.embed_model_path
        if folder is None and settings.embed_model == PACKAGED_EMBEDDER_NAME:
            folder = ensure_embedder_folder(settings.model_dir)
        kwargs = {"specific_model_path": str(folder)} if folder else {}
        self._model = TextEmbedding(settings.embed_model, threads=settings.embed_threads, **kwargs)
        self._batch_size = settings.embed_batch_size
        self.label = f"fastembed · {settings.embed_model}" + (" (int8 ONNX, packaged)" if folder else "")

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = np.stack(list(self._model.embed(texts, batch_size=self._batch_size)))
        return vectors.astype(np.float32).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]
