"""The one Python API behind the Streamlit app, the CLI and the tests.

Heavy parts (embedder, vector store, LLM) are created on first use and then kept, so a search needs
no LLM and `ragchat docs` loads no model at all.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from ingestion.indexer import Indexer, Progress, _no_progress
from ingestion.jobs import IngestJobs
from ingestion.ocr import Tesseract
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
from ragchat.schemas import (
    Answer,
    DocumentRecord,
    IngestProgress,
    IngestResult,
    ModelInfo,
    Redaction,
    Retrieval,
    doc_id_for,
)
from ragchat.settings import Settings

log = logging.getLogger(__name__)


class RagService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        settings.home.mkdir(parents=True, exist_ok=True)
        self._llm: LLM | None = None
        self._llm_lock = threading.Lock()
        self._index_checked = False

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
        indexer = Indexer(
            self.settings, self.embedder, self.store, self.bm25, self.registry, Tesseract.from_settings(self.settings)
        )
        # A run killed mid-ingest left chunks of a version that never went live: delete them first,
        # so the stores agree again and the count check below does not rebuild BM25 for nothing.
        indexer.recover()
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

    @cached_property
    def jobs(self) -> IngestJobs:
        """Background ingests for the app: one worker, progress to poll, cancel between batches."""
        return IngestJobs(self)

    def ingest_bytes(
        self,
        name: str,
        data: bytes,
        progress: Progress = _no_progress,
        password: str | None = None,
        redact: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestResult:
        """Index one file. redact None follows RAGCHAT_REDACT_PII; cancel stops between batches and
        leaves the index as it was (status "cancelled")."""
        return self.indexer.ingest(name, data, progress, password=password, redact=redact, cancel=cancel)

    def ingest_paths(
        self,
        paths: list[Path],
        password: str | None = None,
        redact: bool | None = None,
        progress: Callable[[str, IngestProgress], None] | None = None,
    ) -> list[IngestResult]:
        results: list[IngestResult] = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                reason = exc.strerror or str(exc)
                results.append(IngestResult(source=path.name, status="failed", error=f"cannot read the file: {reason}"))
                continue
            report = (lambda update, name=path.name: progress(name, update)) if progress else _no_progress
            results.append(self.ingest_bytes(path.name, data, report, password=password, redact=redact))
        return results

    def documents(self) -> list[DocumentRecord]:
        return self.registry.all()

    def redactions(self, source: str) -> list[Redaction]:
        """The redaction report of a document (empty when it was indexed without redaction)."""
        return self.registry.redactions(doc_id_for(source))

    def delete(self, source: str) -> bool:
        return self.indexer.delete(source)

    def index_problems(self) -> list[str]:
        """Why the index does not fit the current settings; [] when it does (see `reindex`)."""
        return self.indexer.index_problems()

    def reindex(self, progress: Progress = _no_progress) -> list[IngestResult]:
        """Rebuild every document's chunks and vectors with the current settings, from stored page texts."""
        results = self.indexer.rebuild(progress)
        self._index_checked = False
        return results

    def _require_current_index(self) -> None:
        """Searching vectors made by another model (or other chunks) would return nonsense: refuse
        with the reason until the index is rebuilt. Checked once per process when it passes."""
        if not self._index_checked:
            self.indexer.require_current_index()
            self._index_checked = True

    def search(
        self, query: str, k: int | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Retrieval:
        self._require_current_index()
        weight = self.settings.bm25_weight if bm25_weight is None else bm25_weight
        return self.retriever.search(query, k or self.settings.top_k, weight, rerank)

    def ask_stream(
        self, question: str, session_id: str | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> AnswerStream:
        self._require_current_index()
        return self.answerer.ask(question, session_id, bm25_weight, rerank)

    def ask(
        self, question: str, session_id: str | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Answer:
        return self.ask_stream(question, session_id, bm25_weight, rerank).result()
