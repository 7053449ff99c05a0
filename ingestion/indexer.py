"""Ingest one file: open → (pages: parse → redact → chunk) → keyword index → embed → store.

Progressive: a worker thread reads and chunks pages ahead (at most QUEUE_PAGES of them) while this
thread stores each page's text and chunks in the registry; then all chunks go into BM25 as one
segment, and a new document goes live: searchable by keyword, from any process, within seconds even
for thousands of pages. Embedding follows, `ingest_batch` chunks at a time, each batch recorded as
embedded in the registry, so semantic search fills in behind while the document is already searched
(a search embeds the few not-yet-embedded chunks it returns on the fly). Only the chunk texts of one
document are held for the BM25 segment; vectors are never held beyond a batch.

Idempotent and atomic per document: the same name with the same version is "unchanged" (or, if its
embedding was interrupted, finished); a new version is journalled as unfinished, and a replacing
version goes live only when fully embedded, in one SQLite write, so the old one is searched whole
until then; only then are the old version's chunks deleted. Cancel, a delete of the document (this
process) or a stop request (a delete or re-upload in another process) is checked between pages and
batches and removes what this ingest wrote. Retrieval only returns chunks of registered versions, so
a crash at any point leaves search consistent; `IndexMaintenance.recover` (before each write)
deletes what an interrupted run left, and a live document a crash left partly embedded stays
searchable by keyword until `resume` (or a re-upload) finishes it. With a Chroma server the same holds
when the server goes away mid-ingest.

The rest of keeping the index whole (the manifest check, recovery, reconciliation with the vector
store, delete, rebuild) is `IndexMaintenance` (ingestion/maintenance.py), which the Indexer is given
and calls; its module docstring says why the two are apart.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePath
from typing import Literal

from core.language import LanguageDetector
from core.schemas import Chunk, DocumentRecord, IngestProgress, IngestResult, Page, Redaction, doc_id_for
from core.settings import Settings
from ingestion.bm25_index import BM25Index
from ingestion.chunking import ChunkSource, chunk_page
from ingestion.errors import IndexOutOfDate, IngestCancelled
from ingestion.maintenance import IndexMaintenance, Progress, no_progress
from ingestion.ocr import INSTALL_HINT, Tesseract
from ingestion.outline import Outline
from ingestion.parsers import (
    ParsedFile,
    ParseError,
    PasswordRequired,
    no_text_message,
    open_file,
    page_list,
    version_hash,
)
from ingestion.redaction import Redactor
from ingestion.registry import Registry, now
from ingestion.running_lines import RunningLineRule
from providers.chroma_server import VectorStoreUnavailable
from providers.vector_store import ChromaStore

log = logging.getLogger(__name__)

QUEUE_PAGES = 16


def source_name(name: str) -> str:
    """The name a file is known by: its base name, whatever path (Windows or POSIX) came with it."""
    return PurePath(name.replace("\\", "/")).name


@dataclass
class _PageBatch:
    """What the consumer collects between two writes."""

    chunks: list[Chunk] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    redactions: list[Redaction] = field(default_factory=list)


class Indexer:
    """Ingest into one index (see the module docstring); `maintenance` is the same index's recovery and
    manifest check, which an ingest runs first."""

    def __init__(
        self,
        settings: Settings,
        embed: Callable[[list[str]], list[list[float]]],
        store: ChromaStore,
        bm25: BM25Index,
        registry: Registry,
        maintenance: IndexMaintenance,
        ocr: Tesseract | None = None,
    ) -> None:
        self._settings = settings
        self._embed = embed  # a callable: the embedding model loads on the first batch
        self._store = store
        self._bm25 = bm25
        self._registry = registry
        self._ocr = ocr
        self._running_lines = (
            RunningLineRule(settings.running_line_margin, settings.running_line_share, settings.running_line_sample)
            if settings.running_line_margin
            else None
        )
        self._redactor: Redactor | None = None
        self._maintenance = maintenance
        self._write_lock = maintenance.write_lock  # one write at a time in this process, rebuilds included

    # ---- ingest ---------------------------------------------------------------------------------
    def ingest(
        self,
        name: str,
        data: bytes,
        progress: Progress = no_progress,
        password: str | None = None,
        redact: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestResult:
        started = time.perf_counter()
        source = source_name(name)
        redact = self._settings.redact_pii if redact is None else redact
        cancel = cancel or threading.Event()
        with self._write_lock:
            try:
                if len(data) > self._settings.max_file_mb * 1_000_000:
                    raise ParseError(
                        f"the file is {len(data) / 1e6:.0f} MB, over the {self._settings.max_file_mb:g} MB limit "
                        "(RAGCHAT_MAX_FILE_MB)"
                    )
                self._maintenance.require_current_index()
                self._registry.clear_stop(doc_id_for(source))
                version = version_hash(data, redact)
                existing = self._registry.get(doc_id_for(source))
                if existing and existing.content_hash == version and existing.pending_chunks:
                    # An ingest of this very version was interrupted while embedding: finish it.
                    return self._finish_embedding(existing, progress, cancel)
                if existing and existing.content_hash == version and not existing.missing_chunks:
                    notes = existing.model_dump(include=set(_NOTE_FIELDS))
                    return IngestResult(
                        source=source, status="unchanged", pages=existing.pages, chunks=existing.chunks, **notes
                    )
                self._store.check()  # a server that is down fails the file here, before any work
                self._maintenance.recover()
                if existing and existing.content_hash == version:
                    # The vector store lost some of this version's chunks: index the file afresh.
                    self._maintenance.remove(existing.doc_id)
                progress(IngestProgress(stage="opening the file"))
                parsed = open_file(source, data, password, self._ocr, version, self._running_lines)
            except (ParseError, IndexOutOfDate, VectorStoreUnavailable) as exc:
                return IngestResult(
                    source=source,
                    status="failed",
                    error=str(exc),
                    needs_password=isinstance(exc, PasswordRequired),
                    seconds=time.perf_counter() - started,
                )
            # A PDF's bytes are kept to show a cited page; not a redacted version (its page images would
            # show what was redacted) nor an encrypted one (no password is stored).
            keep = data if parsed.file_type == "pdf" and not redact and password is None else None
            return self._write_version(parsed, redact, progress, cancel, started, keep)

    def _write_version(
        self,
        parsed: ParsedFile,
        redact: bool,
        progress: Progress,
        cancel: threading.Event,
        started: float,
        original: bytes | None = None,
    ) -> IngestResult:
        doc_id = doc_id_for(parsed.source)
        version = parsed.content_hash
        self._registry.begin_version(doc_id, version)
        try:
            if original is not None:  # journalled: dropped with the version's rows if it never goes live
                self._registry.add_original(doc_id, version, original)
            result = self._write(parsed, redact, progress, cancel, started)
        except IngestCancelled as stop:
            self._discard(doc_id, version)
            return IngestResult(
                source=parsed.source, status="cancelled", error=str(stop), seconds=time.perf_counter() - started
            )
        except (ParseError, VectorStoreUnavailable) as exc:  # a server outage: its sentence, not a class name
            self._discard(doc_id, version)
            return IngestResult(
                source=parsed.source, status="failed", error=str(exc), seconds=time.perf_counter() - started
            )
        except Exception as exc:  # a failed file must never stop a batch or damage the index
            log.exception("indexing %s failed", parsed.source)
            self._discard(doc_id, version)
            return IngestResult(
                source=parsed.source,
                status="failed",
                error=f"could not index the file ({type(exc).__name__}: {exc})",
                seconds=time.perf_counter() - started,
            )
        except BaseException:  # Ctrl-C in the CLI: undo what was written, then stop
            self._discard(doc_id, version)
            raise
        return result

    def _discard(self, doc_id: str, version: str) -> None:
        """Remove a version that will not stay live (cancel, failure; a new document may already be
        searchable by keyword). If that fails too (the Chroma server is down), the journal row stays,
        released to `recover`, which finishes the job before the next ingest or at the next start."""
        try:
            if self._registry.live_versions().get(doc_id) == version:
                self._registry.delete(doc_id)  # journalled again, as unfinished
            self._bm25.delete_document(doc_id, only_hash=version)  # local: works when the server is down
            self._store.delete_version(doc_id, version)
            self._registry.abandon(doc_id, version)
        except Exception as exc:
            log.warning("could not remove the unfinished version of %s yet (%s); it is removed later", doc_id, exc)
            try:
                self._registry.release(doc_id, version)
            except Exception:
                log.exception("could not release the journal row of %s; it is removed on the next start", doc_id)

    def _write(
        self, parsed: ParsedFile, redact: bool, progress: Progress, cancel: threading.Event, started: float
    ) -> IngestResult:
        """Two passes. Read: every page parsed, chunked and stored (page texts, the chunks to embed),
        then one BM25 segment; a new document goes live here, searchable by keyword. Embed: the
        stored chunks, batch by batch, into the vector store; a replacing version goes live only
        after this, so the old one stays whole until then."""
        doc_id = doc_id_for(parsed.source)
        version = parsed.content_hash
        redactor = self._redactor_for_home() if redact else None
        state = IngestProgress(stage="reading pages", pages_total=parsed.page_count)

        def report(stage: str) -> None:
            state.stage, state.elapsed_s = stage, time.perf_counter() - started
            progress(state.model_copy())

        record, searchable_s = self._read_pass(parsed, redactor, cancel, state, report, started)
        state.embedding_since_s = time.perf_counter() - started
        self._embed_waiting(doc_id, version, state, report, cancel, live=searchable_s is not None)
        if searchable_s is None:
            old = self._registry.switch(record.model_copy(update={"pending_chunks": 0}))
            if old:
                self._remove_replaced(doc_id, old, version)
        report("indexed")
        return _indexed(record, started, searchable_s)

    def _read_pass(
        self,
        parsed: ParsedFile,
        redactor: Redactor | None,
        cancel: threading.Event,
        state: IngestProgress,
        report: Callable[[str], None],
        started: float,
    ) -> tuple[DocumentRecord, float | None]:
        """Every page parsed, chunked and stored, then one BM25 segment; a new document goes live
        (the seconds it took are returned; None for a replacing version, which waits for its vectors)."""
        doc_id, version, total = doc_id_for(parsed.source), parsed.content_hash, parsed.page_count
        batch = _PageBatch()
        keyword_ids: list[str] = []
        keyword_texts: list[str] = []
        keyword_langs: list[str] = []
        no_text: list[int] = []
        ocr_read: list[int] = []
        redactions = 0

        def flush() -> None:
            self._check_stop(doc_id, version, cancel, live=False)
            self._registry.add_pages(doc_id, version, batch.pages, batch.redactions)
            self._registry.add_chunks_to_embed(doc_id, version, batch.chunks)
            keyword_ids.extend(c.chunk_id for c in batch.chunks)
            keyword_texts.extend(c.keyword_text for c in batch.chunks)
            keyword_langs.extend(c.lang for c in batch.chunks)
            batch.chunks, batch.pages, batch.redactions = [], [], []

        outline = Outline(parsed.title) if parsed.file_type == "pdf" else None
        with closing(_pages_ahead(parsed, redactor, self._settings, cancel, outline)) as pages:
            for page, chunks, found in pages:
                state.pages_done += 1
                state.chunks += len(chunks)
                if not page.had_text_layer:
                    no_text.append(page.number)
                if page.ocr:
                    ocr_read.append(page.number)
                redactions += len(found)
                batch.chunks += chunks
                batch.pages.append(page)
                batch.redactions += found
                if len(batch.pages) >= QUEUE_PAGES:
                    flush()
                report(f"reading page {state.pages_done} of {total}")
        flush()
        if not keyword_ids:
            raise ParseError(no_text_message(no_text, self._ocr) if no_text else "the file holds no text")
        report("adding to the keyword index")
        self._bm25.add(
            keyword_ids, keyword_texts, [doc_id] * len(keyword_ids), [version] * len(keyword_ids), keyword_langs
        )
        self._check_stop(doc_id, version, cancel, live=False)
        page_count = total if parsed.file_type == "pdf" else None  # TXT/MD have no pages
        record = DocumentRecord(
            doc_id=doc_id,
            source=parsed.source,
            file_type=parsed.file_type,
            content_hash=version,
            size_bytes=parsed.size_bytes,
            pages=page_count,
            chunks=len(keyword_ids),
            ingested_at=now(),
            encoding=parsed.encoding,
            no_text_pages=no_text,
            ocr_pages=ocr_read,
            redacted=redactor is not None,
            redactions=redactions,
            warnings=[*parsed.warnings, *_warnings(parsed, no_text, ocr_read, self._ocr, redactions)],
            pending_chunks=len(keyword_ids),
            title=outline.title if outline is not None else "",
        )
        if self._registry.get(doc_id) is not None:
            return record, None
        self._registry.switch(record)  # a new document: searchable by keyword from here on
        state.searchable = True
        return record, time.perf_counter() - started

    def _embed_waiting(
        self,
        doc_id: str,
        version: str,
        state: IngestProgress,
        report: Callable[[str], None],
        cancel: threading.Event,
        live: bool,
    ) -> None:
        """Embed a version's stored chunks into the vector store, `ingest_batch` at a time, recording
        each batch as embedded when it is stored. A batch is stored by a writer thread while the next
        one embeds (the store's writes would otherwise leave the embedder's cores idle). Stops
        (IngestCancelled) when cancelled, when another process asks, or when a live document is
        deleted meanwhile."""
        step = max(self._settings.ingest_batch, 1)
        self._check_stop(doc_id, version, cancel, live)
        chunks = self._registry.chunks_to_embed(doc_id, version, step)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"store-{doc_id[:8]}") as writer:
            stored: Future[None] | None = None
            while chunks:
                report(f"embedding: {state.chunks_embedded} of {state.chunks} chunks")
                vectors = self._embed([c.text for c in chunks])
                if stored is not None:
                    stored.result()
                # Read while the writer is idle: a read during its commit waits on SQLite's lock.
                self._check_stop(doc_id, version, cancel, live)
                following = self._registry.chunks_to_embed(doc_id, version, step, after=chunks[-1].chunk_index)
                stored = writer.submit(self._store_batch, doc_id, version, chunks, vectors, state)
                chunks = following
            if stored is not None:
                stored.result()

    def _store_batch(
        self, doc_id: str, version: str, chunks: list[Chunk], vectors: list[list[float]], state: IngestProgress
    ) -> None:
        self._store.add(chunks, vectors)
        self._registry.mark_embedded(doc_id, version, [c.chunk_id for c in chunks])
        state.chunks_embedded += len(chunks)

    def _check_stop(self, doc_id: str, version: str, cancel: threading.Event, live: bool) -> None:
        if cancel.is_set():
            raise IngestCancelled("cancelled; the index is as it was")
        if self._registry.stop_requested(doc_id):
            raise IngestCancelled("stopped: the document is being deleted or replaced by a newer upload")
        if live and self._registry.live_versions().get(doc_id) != version:
            raise IngestCancelled("stopped: the document was deleted while it was being embedded")

    def resume(self, progress: Progress = no_progress, cancel: threading.Event | None = None) -> list[IngestResult]:
        """Finish embedding the live documents an interrupted ingest left partly embedded (they stay
        searchable by keyword meanwhile). The caller holds the write lock, so nobody else embeds them."""
        cancel = cancel or threading.Event()
        with self._write_lock:
            return [
                self._finish_embedding(record, progress, cancel)
                for record in self._registry.all()
                if record.pending_chunks and not cancel.is_set()
            ]

    def _finish_embedding(self, record: DocumentRecord, progress: Progress, cancel: threading.Event) -> IngestResult:
        started = time.perf_counter()
        state = IngestProgress(stage="embedding", chunks=record.pending_chunks, searchable=True, embedding_since_s=0.0)

        def report(stage: str) -> None:
            state.stage, state.elapsed_s = stage, time.perf_counter() - started
            progress(state.model_copy())

        try:
            self._embed_waiting(record.doc_id, record.content_hash, state, report, cancel, live=True)
        except IngestCancelled as stop:
            return IngestResult(source=record.source, status="cancelled", error=str(stop))
        return _indexed(record, started)

    def _remove_replaced(self, doc_id: str, old: str, live: str) -> None:
        """Delete the replaced version's chunks. The new version is live whatever happens here: a
        failure (the server went away) leaves the old version journalled for `recover`, never undoes
        the new one."""
        try:
            self._store.delete_document(doc_id, keep_hash=live)
            self._bm25.delete_document(doc_id, keep_hash=live)
            self._registry.abandon(doc_id, old)
        except Exception as exc:
            log.warning("the replaced version of %s is removed later: %s", doc_id, exc)

    def _redactor_for_home(self) -> Redactor:
        if self._redactor is None:
            self._redactor = Redactor.for_home(self._settings.home)
        return self._redactor


_NOTE_FIELDS = ("encoding", "no_text_pages", "ocr_pages", "redacted", "redactions", "warnings")
PageRead = tuple[Page, list[Chunk], list[Redaction]]  # a page, its chunks, its redactions


class _End(Enum):
    DONE = "done"


_DONE = _End.DONE  # the reader's last item


def _pages_ahead(
    parsed: ParsedFile,
    redactor: Redactor | None,
    settings: Settings,
    cancel: threading.Event,
    outline: Outline | None = None,
) -> Generator[PageRead, None, None]:
    """(page, its chunks, its redactions), read and chunked by a worker thread at most QUEUE_PAGES
    ahead of the consumer. PDFium and the ONNX runtime release the GIL, so reading overlaps embedding.
    `outline` follows a PDF's headings across its pages (its title is read once they are done)."""
    owner = ChunkSource(doc_id_for(parsed.source), parsed.content_hash, parsed.source, parsed.file_type)
    detector = LanguageDetector.from_settings(settings)
    ahead: queue.Queue[PageRead | BaseException | Literal[_End.DONE]] = queue.Queue(maxsize=QUEUE_PAGES)
    stop = threading.Event()

    def put(item: PageRead | BaseException | Literal[_End.DONE]) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        count = 0
        try:
            for page in parsed.pages():
                if stop.is_set() or cancel.is_set():
                    break
                found: list[Redaction] = []
                if redactor is not None and page.text:
                    text, found = redactor.redact(page.text, page.number)
                    page = page.model_copy(update={"text": text})
                chunks = chunk_page(owner, page, settings.chunk_size, settings.chunk_overlap, count, detector, outline)
                count += len(chunks)
                if not put((page, chunks, found)):
                    break
        except BaseException as exc:  # handed to the consumer, which raises it
            put(exc)
        finally:
            parsed.close()
            put(_DONE)

    worker = threading.Thread(target=produce, name=f"read-{parsed.source}", daemon=True)
    worker.start()
    try:
        while True:
            item = ahead.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                if isinstance(item, ParseError):
                    raise item
                raise ParseError(f"the file could not be read ({type(item).__name__}: {item})") from item
            yield item
    finally:
        stop.set()
        worker.join(timeout=30)


def _indexed(record: DocumentRecord, started: float, searchable_s: float | None = None) -> IngestResult:
    """The result of an ingest (or a finished embedding) that indexed `record`'s version."""
    return IngestResult(
        source=record.source,
        status="indexed",
        pages=record.pages,
        chunks=record.chunks,
        seconds=time.perf_counter() - started,
        searchable_s=searchable_s,
        **record.model_dump(include=set(_NOTE_FIELDS)),
    )


def _warnings(
    parsed: ParsedFile, no_text: list[int], ocr_read: list[int], ocr: Tesseract | None, redactions: int
) -> list[str]:
    notes: list[str] = []
    if parsed.encoding and parsed.encoding not in ("utf-8", "ascii"):
        notes.append(f"read as {parsed.encoding} (not UTF-8)")
    unread = [n for n in no_text if n not in ocr_read]
    if ocr_read:
        notes.append(f"{page_list(ocr_read)}: no text layer, read with Tesseract OCR")
    if unread:
        if ocr is None:
            why = "OCR is turned off (RAGCHAT_OCR=false)"
        elif not ocr.available:
            why = INSTALL_HINT
        else:
            why = "OCR found no text (blank pages?)"
        notes.append(f"{page_list(unread)}: no text, not searchable ({why})")
    if redactions:
        notes.append(f"{redactions} value{'s' if redactions != 1 else ''} redacted (see the redaction report)")
    return notes
