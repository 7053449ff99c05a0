"""One searchable set of documents: the registry, the Chroma collection, the BM25 index, the indexer
that keeps them in step, the retriever over them, and the background ingests that write them.

A deployment has one (RAGCHAT_DOCUMENTS=shared, the default) or one per user (per_user). The
embedder and the reranker are not part of it: every index of a process borrows the same ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property

from ingestion.indexer import Indexer, Progress, _no_progress, source_name
from ingestion.jobs import IngestJobs
from ingestion.ocr import Tesseract
from ingestion.registry import Registry
from rag.bm25_index import BM25Index
from rag.chroma_server import VectorStoreUnavailable
from rag.embedder import Embedder
from rag.reranker import Reranker
from rag.retriever import HybridRetriever
from rag.vector_store import ChromaStore
from ragchat.schemas import IngestResult
from ragchat.settings import Settings
from ragchat.users import UserSpace


class DocumentIndex:
    def __init__(
        self,
        settings: Settings,
        space: UserSpace,
        embedder: Callable[[], Embedder],
        reranker: Callable[[], tuple[Reranker | None, str]],
    ) -> None:
        """`space` says where the index lives; `embedder` and `reranker` hand out the process's shared ones."""
        self.settings = settings
        self._space = space
        self._embedder = embedder
        self._reranker = reranker
        self._checked = False

    @cached_property
    def registry(self) -> Registry:
        return Registry(self._space.registry_path)

    @cached_property
    def store(self) -> ChromaStore:
        return ChromaStore(self.settings.model_copy(update={"collection": self._space.collection}))

    @cached_property
    def bm25(self) -> BM25Index:
        return BM25Index(self._space.bm25_path)

    @cached_property
    def indexer(self) -> Indexer:
        indexer = Indexer(
            self.settings,
            lambda texts: self._embedder().embed(texts),  # loaded on the first embedding, not to check the store
            self.store,
            self.bm25,
            self.registry,
            Tesseract.from_settings(self.settings),
        )
        # A run killed mid-ingest left chunks of a version that never went live: delete them first,
        # so the stores agree again and the reconciliation does not rebuild BM25 for nothing.
        indexer.recover()
        # BM25 lost or behind, or a Chroma server wiped or restored: rebuild BM25, mark lost documents.
        indexer.reconcile()
        return indexer

    @cached_property
    def retriever(self) -> HybridRetriever:
        self.indexer  # noqa: B018 - checks the BM25 index is in step before the first search
        reranker, label = self._reranker()
        return HybridRetriever(
            self._embedder(),
            self.store,
            self.bm25,
            self.registry,
            reranker,
            label,
            candidates=self.settings.candidates,
            fusion=self.settings.fusion,
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
        """A Chroma server that cannot be reached fails the file with the reason, like any other failure."""
        try:
            indexer = self.indexer
        except VectorStoreUnavailable as exc:
            return IngestResult(source=source_name(name), status="failed", error=str(exc))
        return indexer.ingest(name, data, progress, password=password, redact=redact, cancel=cancel)

    def reindex(self, progress: Progress = _no_progress) -> list[IngestResult]:
        results = self.indexer.rebuild(progress)
        self._checked = False
        return results

    def require_current(self) -> None:
        """Searching vectors made by another model (or other chunks) would return nonsense: refuse
        with the reason until the index is rebuilt. Checked once per process when it passes."""
        if not self._checked:
            self.indexer.require_current_index()
            self._checked = True
