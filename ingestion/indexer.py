"""Ingest one file: parse → chunk → embed → store → register.

Idempotent and atomic per document: the same name with the same bytes is "unchanged"; a new version
is embedded and stored (Chroma, then the BM25 index) beside the old one, the registry switches to it
in one SQLite write, and only then are the old version's chunks deleted from both. Retrieval only
returns chunks of the registered version, so a crash at any point leaves search consistent and a
rerun finishes the job.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ingestion.chunking import chunk_document
from ingestion.parsers import ParseError, content_hash, parse_document
from ingestion.registry import Registry, now
from rag.bm25_index import BM25Index
from rag.embedder import Embedder
from rag.vector_store import ChromaStore
from ragchat.schemas import Chunk, DocumentRecord, IngestResult, doc_id_for
from ragchat.settings import Settings

Progress = Callable[[str, float], None]


def _no_progress(message: str, fraction: float) -> None:
    del message, fraction


class Indexer:
    def __init__(
        self, settings: Settings, embedder: Embedder, store: ChromaStore, bm25: BM25Index, registry: Registry
    ) -> None:
        self._settings = settings
        self._embedder = embedder
        self._store = store
        self._bm25 = bm25
        self._registry = registry

    def ingest(self, name: str, data: bytes, progress: Progress = _no_progress) -> IngestResult:
        started = time.perf_counter()
        source = name.replace("\\", "/").rsplit("/", 1)[-1]
        try:
            existing = self._registry.get(doc_id_for(source))
            if existing and existing.content_hash == content_hash(data):
                return IngestResult(source=source, status="unchanged", pages=existing.pages, chunks=existing.chunks)
            progress("parsing", 0.0)
            document = parse_document(source, data)
            chunks = chunk_document(document, self._settings.chunk_size, self._settings.chunk_overlap)
            pages = len(document.pages) if document.file_type == "pdf" else 0  # TXT/MD have no pages
            batch = max(self._settings.embed_batch_size * 4, 1)
            for begin in range(0, len(chunks), batch):
                part = chunks[begin : begin + batch]
                progress(f"embedding chunks {begin + 1}–{begin + len(part)} of {len(chunks)}", begin / len(chunks))
                self._store.add(part, self._embedder.embed([c.text for c in part]))
            progress("adding to the keyword index", 1.0)
            self._add_to_keyword_index(chunks)
            self._registry.put(
                DocumentRecord(
                    doc_id=document.doc_id,
                    source=document.source,
                    file_type=document.file_type,
                    content_hash=document.content_hash,
                    size_bytes=document.size_bytes,
                    pages=pages,
                    chunks=len(chunks),
                    ingested_at=now(),
                )
            )
            self._store.delete_document(document.doc_id, keep_hash=document.content_hash)
            self._bm25.delete_document(document.doc_id, keep_hash=document.content_hash)
            progress("indexed", 1.0)
            return IngestResult(
                source=source,
                status="indexed",
                pages=pages,
                chunks=len(chunks),
                seconds=time.perf_counter() - started,
            )
        except ParseError as exc:
            error = str(exc)
        except Exception as exc:  # a failed file must never stop a batch or damage the index
            error = f"could not index the file ({type(exc).__name__}: {exc})"
        return IngestResult(source=source, status="failed", error=error, seconds=time.perf_counter() - started)

    def delete(self, source: str) -> bool:
        doc_id = doc_id_for(source)
        removed = self._registry.delete(doc_id)
        self._store.delete_document(doc_id)
        self._bm25.delete_document(doc_id)
        return removed

    def rebuild_keyword_index(self) -> int:
        """Refill the BM25 index from the vector store (after its files were lost or it fell out of step)."""
        self._bm25.clear()
        for batch in self._store.iter_chunks():
            self._add_to_keyword_index(batch)
        return len(self._bm25)

    def _add_to_keyword_index(self, chunks: list[Chunk]) -> None:
        self._bm25.add(
            [c.chunk_id for c in chunks],
            [c.text for c in chunks],
            [c.doc_id for c in chunks],
            [c.content_hash for c in chunks],
        )
