"""The one Python API behind the Streamlit app, the CLI and the tests.

Heavy parts (embedder, vector store, LLM) are created on first use and then kept, so a search needs
no LLM and `ragchat docs` loads no model at all.
"""

from __future__ import annotations

import logging
import threading
from functools import cached_property
from pathlib import Path

from ingestion.indexer import Indexer, Progress, _no_progress
from ingestion.registry import Registry
from rag.answerer import Answerer, AnswerStream
from rag.bm25_index import BM25Index
from rag.conversations import ConversationStore
from rag.embedder import Embedder
from rag.llm.base import LLM
from rag.llm.factory import build_llm
from rag.reranker import Reranker, load_reranker
from rag.retriever import HybridRetriever
from rag.vector_store import ChromaStore
from ragchat.schemas import Answer, DocumentRecord, IngestResult, ModelInfo, Retrieval
from ragchat.settings import Settings

log = logging.getLogger(__name__)


class RagService:
    def __init__(self, settings: Settings, llm: LLM | None = None) -> None:
        """`llm`: an already loaded model to share (the Eval page evaluates with the app's model)."""
        self.settings = settings
        settings.home.mkdir(parents=True, exist_ok=True)
        self._llm: LLM | None = llm
        self._llm_lock = threading.Lock()

    @cached_property
    def registry(self) -> Registry:
        return Registry(self.settings.db_path)

    @cached_property
    def embedder(self) -> Embedder:
        return Embedder(self.settings)

    @cached_property
    def store(self) -> ChromaStore:
        return ChromaStore(self.settings)

    @cached_property
    def bm25(self) -> BM25Index:
        return BM25Index(self.settings.bm25_path)

    @cached_property
    def indexer(self) -> Indexer:
        indexer = Indexer(self.settings, self.embedder, self.store, self.bm25, self.registry)
        if len(self.bm25) != self.store.count():
            # The keyword index was deleted, or a crash left it behind the vector store: refill it once.
            log.warning("BM25 index out of step with the vector store; rebuilding it from the stored chunks")
            indexer.rebuild_keyword_index()
        return indexer

    @cached_property
    def _reranker(self) -> tuple[Reranker | None, str]:
        return load_reranker(self.settings)

    @cached_property
    def conversations(self) -> ConversationStore:
        return ConversationStore(self.settings.db_path)

    @cached_property
    def retriever(self) -> HybridRetriever:
        self.indexer  # noqa: B018 - checks the BM25 index is in step before the first search
        reranker, label = self._reranker
        return HybridRetriever(
            self.embedder,
            self.store,
            self.bm25,
            self.registry,
            reranker,
            label,
            candidates=self.settings.candidates,
            fusion=self.settings.fusion,
        )

    @cached_property
    def answerer(self) -> Answerer:
        return Answerer(self.settings, self.retriever, self.conversations, self.llm, self.models)

    def llm(self) -> LLM:
        """The answering model, built on first use (loading a GGUF takes seconds)."""
        with self._llm_lock:
            if self._llm is None:
                self._llm = build_llm(self.settings)
            return self._llm

    def models(self) -> ModelInfo:
        return ModelInfo(
            llm=self._llm.label if self._llm else "not loaded yet",
            embedder=self.embedder.label,
            reranker=self._reranker[1],
        )

    def ingest_bytes(self, name: str, data: bytes, progress: Progress = _no_progress) -> IngestResult:
        return self.indexer.ingest(name, data, progress)

    def ingest_paths(self, paths: list[Path]) -> list[IngestResult]:
        results: list[IngestResult] = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                results.append(IngestResult(source=path.name, status="failed", error=f"cannot read file: {exc}"))
                continue
            results.append(self.ingest_bytes(path.name, data))
        return results

    def documents(self) -> list[DocumentRecord]:
        return self.registry.all()

    def delete(self, source: str) -> bool:
        return self.indexer.delete(source)

    def search(
        self, query: str, k: int | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Retrieval:
        weight = self.settings.bm25_weight if bm25_weight is None else bm25_weight
        return self.retriever.search(query, k or self.settings.top_k, weight, rerank)

    def ask_stream(
        self, question: str, session_id: str | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> AnswerStream:
        return self.answerer.ask(question, session_id, bm25_weight, rerank)

    def ask(
        self, question: str, session_id: str | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Answer:
        return self.ask_stream(question, session_id, bm25_weight, rerank).result()
