"""One searchable set of documents: the registry, the Chroma collection, the BM25 index, the indexer
that keeps them in step, the retriever over them, and the background ingests that write them.

A deployment has one (RAGCHAT_DOCUMENTS=shared, the default) or one per user (per_user). The
embedder and the reranker are not part of it: every index of a process borrows the same ones.

Reading never writes: search, ask, docs and export change nothing on disk. Every write (ingest,
delete, rebuild, recovery) happens inside `writing()`, which holds the index's inter-process write
lock (ingestion/write_lock.py) and, holding it, runs crash recovery and reconciliation first.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property

from pydantic import BaseModel, Field

from core.schemas import IngestProgress, IngestResult, doc_id_for
from core.settings import Settings
from core.user_space import UserSpace
from ingestion.bm25_index import BM25Index
from ingestion.indexer import Indexer, Progress, no_progress, source_name
from ingestion.maintenance import IndexMaintenance
from ingestion.ocr import Tesseract
from ingestion.registry import Registry
from ingestion.write_lock import WaitListener, WriteLock, WriterBusy, WriterInfo
from providers.chroma_server import VectorStoreUnavailable
from providers.embedder import TextEmbedder
from providers.reranker import Reranker
from providers.vector_store import ChromaStore
from rag.document_cards import DocumentCards
from rag.retriever import HybridRetriever
from rag.stored_answers import StoredAnswers
from rag.whole_document import SectionSummaryCache
from ragchat.ingest_jobs import IngestJobs

log = logging.getLogger(__name__)


class IndexOpened(BaseModel):
    """What taking the write lock found and repaired."""

    recovered_versions: int = Field(description="Unfinished document versions a killed run left, now removed.")


class DocumentIndex:
    def __init__(
        self,
        settings: Settings,
        space: UserSpace,
        embedder: Callable[[], TextEmbedder],
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
    def summaries(self) -> SectionSummaryCache:
        """Section summaries of this index's documents, by version, in the registry's file."""
        return SectionSummaryCache(self._space.registry_path)

    @cached_property
    def cards(self) -> DocumentCards:
        """The documents' cards (their overviews, written once), by version, in the registry's file."""
        return DocumentCards(self._space.registry_path)

    @cached_property
    def answers(self) -> StoredAnswers:
        """Answers to requests about whole documents, by prompt, in the registry's file."""
        return StoredAnswers(self._space.registry_path)

    def forget_old_versions(self) -> None:
        """Drop the section summaries, cards and stored answers of versions that are no longer live."""
        live = self.registry.live_versions()
        self.summaries.keep_only(live)
        self.cards.keep_only(live)
        self.answers.keep_only(live)

    @cached_property
    def store(self) -> ChromaStore:
        return ChromaStore(
            self.settings.model_copy(update={"collection": self._space.collection}), self.registry.chunks
        )

    @cached_property
    def bm25(self) -> BM25Index:
        return BM25Index(self._space.bm25_path)

    @cached_property
    def maintenance(self) -> IndexMaintenance:
        """Recovery, reconciliation, delete and rebuild of this index, and its manifest check."""
        return IndexMaintenance(
            self.settings,
            lambda texts: self._embedder().embed(texts),  # loaded on the first embedding, not to check the store
            self.store,
            self.bm25,
            self.registry,
        )

    @cached_property
    def indexer(self) -> Indexer:
        indexer = Indexer(
            self.settings,
            lambda texts: self._embedder().embed(texts),  # loaded on the first embedding, not to check the store
            self.store,
            self.bm25,
            self.registry,
            self.maintenance,
            Tesseract.from_settings(self.settings),
        )
        return indexer

    @cached_property
    def write_lock(self) -> WriteLock:
        """One writer at a time, across processes, beside the registry it guards."""
        return WriteLock(self._space.registry_path.with_suffix(".write.lock"))

    @contextmanager
    def writing(
        self,
        what: str,
        wait: bool = True,
        on_wait: WaitListener | None = None,
        repair: bool = True,
        source: str | None = None,
    ) -> Iterator[IndexOpened]:
        """Hold the write lock for one write (ingest, delete, rebuild, recovery). Holding it, first take
        in what another process committed (BM25 reloads), then bring the stores in step: a run killed
        mid-ingest left chunks of a version that never went live (deleted first, so the reconciliation
        does not rebuild BM25 for nothing); BM25 lost or behind, or a Chroma server wiped or restored
        (BM25 rebuilt, lost documents marked). Raises WriterBusy (wait=False and another process
        writes) or VectorStoreUnavailable (a Chroma server cannot be used). repair=False skips the
        recovery for a write that replaces everything anyway (a rebuild runs its own). `source`: the
        document this write is about, which another process that wants to write it reads."""
        with self.write_lock.hold(what, wait=wait, on_wait=on_wait, source=source):
            self.bm25.reload_if_changed()
            if not repair:
                yield IndexOpened(recovered_versions=0)
                return
            recovered = self.maintenance.recover()
            self.maintenance.reconcile()
            if recovered:
                log.warning("recovered the index: removed %d unfinished document version(s)", recovered)
            yield IndexOpened(recovered_versions=recovered)

    def recover(self, wait: bool = False) -> IndexOpened:
        """Recovery and reconciliation as a write of their own (`ragchat docs`, a Chroma server that came
        back). Raises WriterBusy when another process is writing and wait is False."""
        with self.writing("recovery", wait=wait) as opened:
            return opened

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
        wait: bool = True,
    ) -> IngestResult:
        """A Chroma server that cannot be reached fails the file with the reason, like any other failure.
        While another process writes, `progress` hears who it waits for (stage "waiting for …"); with
        wait=False the file fails at once with that reason."""
        source = source_name(name)

        def reporting(update: IngestProgress) -> None:
            progress(update)
            if update.pages_total:
                self.write_lock.progress(update.fraction)

        holder = self.write_lock.holder()
        if holder is not None and holder.source == source and holder.pid != os.getpid():
            self.registry.request_stop(doc_id_for(source))  # a newer upload: the one being written stops
        try:
            with self.writing(f"the ingest of {source}", wait=wait, on_wait=_waiting(progress), source=source):
                result = self.indexer.ingest(name, data, reporting, password=password, redact=redact, cancel=cancel)
                self.forget_old_versions()  # a replaced version's summaries and card go
                return result
        except (VectorStoreUnavailable, WriterBusy) as exc:
            return IngestResult(source=source, status="failed", error=str(exc))

    def delete(self, source: str) -> bool:
        """Whether the document is gone because of this call. An ingest writing it (here or in another
        process) is asked to stop first, and removes what it wrote; the delete then waits for the write
        lock only as long as that takes (one batch), not for the ingest to finish."""
        doc_id = doc_id_for(source_name(source))
        existed = doc_id in self.registry.live_versions()
        self.registry.request_stop(doc_id)
        with self.writing(f"deleting {source}", source=source_name(source)):
            deleted = self.maintenance.delete(source)
            self.forget_old_versions()
            return deleted or (existed and doc_id not in self.registry.live_versions())

    def resume(
        self, progress: Progress = no_progress, cancel: threading.Event | None = None, wait: bool = False
    ) -> list[IngestResult]:
        """Finish embedding what an interrupted ingest left (its documents are searchable by keyword
        meanwhile). Nothing to do: returns at once. Another process writing: returns at once
        (wait=False, the app's check at start), or waits for it, `progress` hearing whom it waits for
        (wait=True, `ragchat resume`); that writer may have finished them meanwhile."""
        if not any(record.pending_chunks for record in self.registry.all()):
            return []

        try:
            with self.writing(
                "finishing the embedding of partly embedded documents", wait=wait, on_wait=_waiting(progress)
            ):
                return self.indexer.resume(progress, cancel)
        except WriterBusy:
            return []

    def reindex(self, progress: Progress = no_progress) -> list[IngestResult]:
        with self.writing("the index rebuild", repair=False):
            results = self.maintenance.rebuild(progress)
        self._checked = False
        return results

    def require_current(self) -> None:
        """Searching vectors made by another model (or other chunks) would return nonsense: refuse
        with the reason until the index is rebuilt. Checked once per process when it passes. A reader
        writes nothing: it takes in what other processes committed to BM25 since it last looked."""
        self.bm25.reload_if_changed()
        if not self._checked:
            self.maintenance.require_current_index()
            self._checked = True


def _waiting(progress: Progress) -> WaitListener:
    """Tell `progress` whom a write waits for (stage "waiting for …") while another process holds the lock."""

    def waiting(holder: WriterInfo | None) -> None:
        what = holder.describe() if holder else "another process's write"
        progress(IngestProgress(stage=f"waiting for {what}"))

    return waiting
