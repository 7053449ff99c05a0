"""One searchable set of documents: the registry, the Chroma collection, the BM25 index, the indexer
that keeps them in step, the retriever over them, and the background ingests that write them.

A deployment has one (RAGCHAT_DOCUMENTS=shared, the default) or one per user (per_user). The
embedder and the reranker are not part of it: every index of a process borrows the same ones.

Building a part never touches the stores. `open()` is the one call that does: it runs crash recovery
and reconciliation (once per process) and reports what it did; every search, ask and ingest calls it
first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property

from pydantic import BaseModel, Field

from core.schemas import IngestResult
from core.settings import Settings
from core.user_space import UserSpace
from ingestion.bm25_index import BM25Index
from ingestion.indexer import Indexer, Progress, no_progress, source_name
from ingestion.ocr import Tesseract
from ingestion.registry import Registry
from providers.chroma_server import VectorStoreUnavailable
from providers.embedder import Embedder
from providers.reranker import Reranker
from providers.vector_store import ChromaStore
from rag.retriever import HybridRetriever
from ragchat.ingest_jobs import IngestJobs


class IndexOpened(BaseModel):
    """What opening the index did."""

    recovered_versions: int = Field(description="Unfinished document versions a killed run left, now removed.")


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
        self._opened: IndexOpened | None = None
        self._open_lock = threading.Lock()

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
        return indexer

    def open(self) -> IndexOpened:
        """Bring the stores in step, once per process: a run killed mid-ingest left chunks of a version
        that never went live (deleted first, so the reconciliation does not rebuild BM25 for nothing);
        BM25 lost or behind, or a Chroma server wiped or restored (BM25 rebuilt, lost documents marked).
        Raises VectorStoreUnavailable when a Chroma server cannot be used."""
        with self._open_lock:
            if self._opened is None:
                recovered = self.indexer.recover()
                self.indexer.reconcile()
                self._opened = IndexOpened(recovered_versions=recovered)
            return self._opened

    @cached_property
    def retriever(self) -> HybridRetriever:
        reranker, label = self._reranker()
        return HybridRetriever(
            self._embedder(),
            self.store,
            self.bm25,
            self.registry,
            reranker,
            label,
            candidates=self.settings.retrieval_candidates,
            fusion=self.settings.fusion,
            rrf_k=self.settings.rrf_k,
        )

    @cached_property
    def jobs(self) -> IngestJobs:
        """Background ingests for the app: one worker, progress to poll, cancel between batches."""
        return IngestJobs(self)

    def ingest_bytes(
        self,
        name: str,
        data: bytes,
        progress: Progress = no_progress,
        password: str | None = None,
        redact: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestResult:
        """A Chroma server that cannot be reached fails the file with the reason, like any other failure."""
        try:
            self.open()
        except VectorStoreUnavailable as exc:
            return IngestResult(source=source_name(name), status="failed", error=str(exc))
        return self.indexer.ingest(name, data, progress, password=password, redact=redact, cancel=cancel)

    def reindex(self, progress: Progress = no_progress) -> list[IngestResult]:
        self.open()
        results = self.indexer.rebuild(progress)
        self._checked = False
        return results

    def require_current(self) -> None:
        """Searching vectors made by another model (or other chunks) would return nonsense: refuse
        with the reason until the index is rebuilt. Checked once per process when it passes."""
        self.open()
        if not self._checked:
            self.indexer.require_current_index()
            self._checked = True
