"""The document registry, in the SQLite file of RAGCHAT_HOME.

- `documents`: one row per live document version, written once its chunks are in the keyword index
  (BM25). `pending_chunks` counts those not yet embedded: a new document goes live as soon as
  keyword search can find it, and semantic search fills in behind (progressive ingest); a replacing
  version goes live only when fully embedded. `missing_chunks` says the vector store lost some since
  (a Chroma server wiped or restored from an older backup; found at start-up).
- `chunks_to_embed`: the chunks of a version that are in BM25 but not yet in the vector store, with
  their text and metadata, so a search can show them (and embed them on the fly) before the ingest
  embeds them, and a killed ingest can be finished later from here.
- `embedded_chunks`: the text and metadata of the chunks in the vector store, which holds only their
  vectors and the two ids it filters on (the text and metadata cost Chroma two thirds of its write
  CPU: a full-text index we never query). A chunk's row moves here from `chunks_to_embed` when its
  vector is stored. Collections written before this keep their text in Chroma and are read from there.
- `stop_requests`: a delete, or a re-upload in another process, asks whoever is writing that
  document to stop; the writer checks between batches, and the next ingest of it clears the request.
- `unfinished`: versions whose chunks may sit in the stores without being live: one being written
  (with the writer's process id), or an old one still to be deleted after a switch. A crash at any
  point leaves a row here; `IndexMaintenance.recover` deletes those chunks on the next start, so the registry,
  Chroma and BM25 agree again.
- `pages`: the parsed (and redacted) text of each live version's pages, so the index can be rebuilt
  after a settings change without the original files, their passwords or another OCR pass.
- `redactions`: the redaction report of each version.
- `meta`: the index manifest (embedding model and chunking settings the stored vectors were made with).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from core.schemas import Chunk, DocumentRecord, IndexManifest, IngestNotes, Page, PageHeading, Redaction, StillEmbedding
from core.sqlite_db import SQLiteTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL UNIQUE,
    file_type TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    pages INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    ingested_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS unfinished (
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    pid INTEGER,
    PRIMARY KEY (doc_id, content_hash)
);
CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    number INTEGER NOT NULL,
    text TEXT NOT NULL,
    ocr INTEGER NOT NULL DEFAULT 0,
    headings TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (doc_id, content_hash, number)
);
CREATE TABLE IF NOT EXISTS redactions (
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    page INTEGER NOT NULL,
    kind TEXT NOT NULL,
    placeholder TEXT NOT NULL,
    preview TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS redactions_by_version ON redactions (doc_id, content_hash);
CREATE TABLE IF NOT EXISTS originals (
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (doc_id, content_hash)
);
CREATE TABLE IF NOT EXISTS chunks_to_embed (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_to_embed_by_version ON chunks_to_embed (doc_id, content_hash, position);
CREATE TABLE IF NOT EXISTS embedded_chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS embedded_chunks_by_version ON embedded_chunks (doc_id, content_hash);
CREATE TABLE IF NOT EXISTS stop_requests (doc_id TEXT PRIMARY KEY, pid INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Columns added after the first release; an older file gets them on open.
_ADDED_COLUMNS = {
    "documents": {
        "notes": "TEXT NOT NULL DEFAULT '{}'",
        "missing_chunks": "INTEGER NOT NULL DEFAULT 0",
        "pending_chunks": "INTEGER NOT NULL DEFAULT 0",
    },
    "pages": {"headings": "TEXT NOT NULL DEFAULT '[]'"},
}
_MANIFEST_KEY = "index_manifest"
_REBUILD_KEY = "rebuild_started"


class Registry(SQLiteTables):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, _SCHEMA)
        with closing(self._connect()) as conn, conn:
            for table, added in _ADDED_COLUMNS.items():
                present = {row["name"] for row in conn.execute(f"PRAGMA table_info({table})")}
                for column, declaration in added.items():
                    if column not in present:
                        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        # Every search needs the live versions. One long-lived reader answers `PRAGMA data_version`,
        # which changes whenever any other connection (this process's writers, a CLI ingest running
        # beside the app) commits, so the cached map is re-read only after a change.
        self._reader = sqlite3.connect(self._path, timeout=30, check_same_thread=False)
        self._reader_lock = threading.Lock()
        self._live: tuple[int, dict[str, str], list[StillEmbedding]] | None = None

    # ---- documents ----------------------------------------------------------------------------
    def get(self, doc_id: str) -> DocumentRecord | None:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT * FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return _record(row) if row else None

    def put(self, record: DocumentRecord) -> None:
        """Insert or replace a live version (no journal: for bulk loads and tests)."""
        with closing(self._connect()) as conn, conn:
            _put(conn, record)

    def delete(self, doc_id: str) -> str | None:
        """Remove a document in one transaction: its row, pages and report; its chunks are left to
        the caller and journalled as unfinished until then. Returns the removed version, if any."""
        with closing(self._connect()) as conn, conn:
            row = conn.execute("SELECT content_hash FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
            if row is None:
                return None
            version = row["content_hash"]
            conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
            conn.execute("INSERT OR REPLACE INTO unfinished VALUES (?, ?, NULL)", (doc_id, version))
            _drop_version_rows(conn, doc_id, version)
        return version

    def mark_missing(self, doc_id: str, content_hash: str, missing: int) -> None:
        """Record how many chunks of a live version the vector store no longer holds (0: all there).
        Writing the version again (re-upload, rebuild) resets it, since `_put` replaces the row."""
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "UPDATE documents SET missing_chunks = ? WHERE doc_id = ? AND content_hash = ?",
                (missing, doc_id, content_hash),
            )

    def all(self) -> list[DocumentRecord]:
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT * FROM documents ORDER BY source").fetchall()
        return [_record(row) for row in rows]

    def live_versions(self) -> dict[str, str]:
        """doc_id → content_hash of every searchable document version. Read-only for callers."""
        return self._live_state()[1]

    def still_embedding(self) -> list[StillEmbedding]:
        """Live documents whose semantic index is not complete yet, by source."""
        return self._live_state()[2]

    def _live_state(self) -> tuple[int, dict[str, str], list[StillEmbedding]]:
        with self._reader_lock:
            (version,) = self._reader.execute("PRAGMA data_version").fetchone()
            if self._live is None or self._live[0] != version:
                rows = self._reader.execute(
                    "SELECT doc_id, content_hash, source, chunks, pending_chunks FROM documents ORDER BY source"
                ).fetchall()
                partial = [
                    StillEmbedding(source=source, embedded_fraction=1.0 - pending / chunks)
                    for _, _, source, chunks, pending in rows
                    if pending and chunks
                ]
                self._live = (version, {doc_id: content_hash for doc_id, content_hash, *_ in rows}, partial)
            return self._live

    # ---- the journal of unfinished versions ---------------------------------------------------------
    def begin_version(self, doc_id: str, content_hash: str) -> None:
        """Journal a version about to be written by this process (before any chunk is stored)."""
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO unfinished VALUES (?, ?, ?)", (doc_id, content_hash, os.getpid()))

    def release(self, doc_id: str, content_hash: str) -> None:
        """Hand an unfinished version this process gave up on to `recover` (its writer is still alive,
        so `unfinished()` would otherwise skip it until the next start)."""
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "UPDATE unfinished SET pid = NULL WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash)
            )

    def add_pages(self, doc_id: str, content_hash: str, pages: list[Page], redactions: list[Redaction]) -> None:
        """Store the text of pages of a version being written (not live until `switch`)."""
        with closing(self._connect()) as conn, conn:
            conn.executemany(
                "INSERT OR REPLACE INTO pages (doc_id, content_hash, number, text, ocr, headings) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(doc_id, content_hash, p.number, p.text, int(p.ocr), _headings_json(p)) for p in pages],
            )
            conn.executemany(
                "INSERT INTO redactions VALUES (?, ?, ?, ?, ?, ?)",
                [(doc_id, content_hash, r.page, r.kind, r.placeholder, r.preview) for r in redactions],
            )

    def switch(self, record: DocumentRecord) -> str | None:
        """Make `record` the live version in one write. The version it replaces (returned) is
        journalled, and its pages and report dropped; its chunks are the caller's to delete next."""
        with closing(self._connect()) as conn, conn:
            row = conn.execute("SELECT content_hash FROM documents WHERE doc_id = ?", (record.doc_id,)).fetchone()
            old = row["content_hash"] if row and row["content_hash"] != record.content_hash else None
            _put(conn, record)
            conn.execute(
                "DELETE FROM unfinished WHERE doc_id = ? AND content_hash = ?", (record.doc_id, record.content_hash)
            )
            if old:
                conn.execute("INSERT OR REPLACE INTO unfinished VALUES (?, ?, NULL)", (record.doc_id, old))
                _drop_version_rows(conn, record.doc_id, old)
        return old

    # ---- chunks in BM25 that are not embedded yet ------------------------------------------------------
    def add_chunks_to_embed(self, doc_id: str, content_hash: str, chunks: list[Chunk]) -> None:
        with closing(self._connect()) as conn, conn:
            conn.executemany(
                "INSERT OR REPLACE INTO chunks_to_embed VALUES (?, ?, ?, ?, ?)",
                [(c.chunk_id, doc_id, content_hash, c.chunk_index, c.model_dump_json()) for c in chunks],
            )

    def chunks_to_embed(self, doc_id: str, content_hash: str, limit: int, after: int = -1) -> list[Chunk]:
        """The next `limit` chunks of a version still to embed, in document order, from position `after`
        on (exclusive: the batch being stored meanwhile is not handed out again)."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT data FROM chunks_to_embed WHERE doc_id = ? AND content_hash = ? AND position > ? "
                "ORDER BY position LIMIT ?",
                (doc_id, content_hash, after, limit),
            ).fetchall()
        return [Chunk.model_validate_json(row["data"]) for row in rows]

    def waiting_chunks(self, chunk_ids: list[str]) -> dict[str, Chunk]:
        """Those of these chunks that keyword search knows but the vector store does not hold yet."""
        if not chunk_ids:
            return {}
        with closing(self._connect()) as conn:
            marks = ",".join("?" * len(chunk_ids))
            rows = conn.execute(f"SELECT data FROM chunks_to_embed WHERE chunk_id IN ({marks})", chunk_ids).fetchall()
        chunks = [Chunk.model_validate_json(row["data"]) for row in rows]
        return {c.chunk_id: c for c in chunks}

    def chunks(self, chunk_ids: list[str]) -> dict[str, Chunk]:
        """These chunks by id, embedded or still waiting (the vector store keeps no text)."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        with self._reader_lock:  # every search reads here: the long-lived connection saves opening one
            rows = self._reader.execute(
                f"SELECT data FROM embedded_chunks WHERE chunk_id IN ({marks}) "
                f"UNION ALL SELECT data FROM chunks_to_embed WHERE chunk_id IN ({marks})",
                chunk_ids + chunk_ids,
            ).fetchall()
        chunks = [Chunk.model_validate_json(data) for (data,) in rows]
        return {c.chunk_id: c for c in chunks}

    def mark_embedded(self, doc_id: str, content_hash: str, chunk_ids: list[str]) -> int:
        """These chunks are in the vector store now: their rows move to `embedded_chunks`. Returns how
        many of the version are still to embed."""
        ids = [(cid,) for cid in chunk_ids]
        with closing(self._connect()) as conn, conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embedded_chunks "
                "SELECT chunk_id, doc_id, content_hash, data FROM chunks_to_embed WHERE chunk_id = ?",
                ids,
            )
            conn.executemany("DELETE FROM chunks_to_embed WHERE chunk_id = ?", ids)
            (left,) = conn.execute(
                "SELECT COUNT(*) FROM chunks_to_embed WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash)
            ).fetchone()
            conn.execute(
                "UPDATE documents SET pending_chunks = ? WHERE doc_id = ? AND content_hash = ?",
                (left, doc_id, content_hash),
            )
        return int(left)

    def drop_chunks(self) -> None:
        """Forget every chunk, embedded or waiting (a rebuild chunks every document again)."""
        with closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM chunks_to_embed")
            conn.execute("DELETE FROM embedded_chunks")

    def iter_chunks_to_embed(self, batch: int = 1000) -> Iterator[list[Chunk]]:
        with closing(self._connect()) as conn:
            cursor = conn.execute("SELECT data FROM chunks_to_embed ORDER BY doc_id, position")
            while rows := cursor.fetchmany(batch):
                yield [Chunk.model_validate_json(row["data"]) for row in rows]

    def waiting_total(self) -> int:
        """Chunks of any version that BM25 may hold and the vector store does not (reconciliation)."""
        with closing(self._connect()) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM chunks_to_embed").fetchone()[0])

    # ---- asking the writer of a document to stop ------------------------------------------------------
    def request_stop(self, doc_id: str) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO stop_requests VALUES (?, ?)", (doc_id, os.getpid()))

    def stop_requested(self, doc_id: str) -> bool:
        """Whether a delete or a newer upload asked the writer of this document to stop."""
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT 1 FROM stop_requests WHERE doc_id = ?", (doc_id,)).fetchone()
        return row is not None

    def clear_stop(self, doc_id: str) -> None:
        """At the start of a write of this document: a request made before it is not for it."""
        with closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM stop_requests WHERE doc_id = ?", (doc_id,))

    def abandon(self, doc_id: str, content_hash: str) -> None:
        """Forget a version that will never be live (its chunks must already be gone)."""
        with closing(self._connect()) as conn, conn:
            live = conn.execute("SELECT content_hash FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
            if live is None or live["content_hash"] != content_hash:
                _drop_version_rows(conn, doc_id, content_hash)
            conn.execute("DELETE FROM unfinished WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash))

    def unfinished(self, include_running: bool = False) -> list[tuple[str, str]]:
        """(doc_id, content_hash) of versions left unfinished; those a live process is still writing
        are skipped unless include_running."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT doc_id, content_hash, pid FROM unfinished").fetchall()
        return [
            (row["doc_id"], row["content_hash"])
            for row in rows
            if include_running or row["pid"] is None or not process_alive(row["pid"])
        ]

    def add_original(self, doc_id: str, content_hash: str, data: bytes) -> None:
        """Keep a PDF version's bytes, so a citation can show its page (goes with the version's rows)."""
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO originals VALUES (?, ?, ?)", (doc_id, content_hash, data))

    def original(self, doc_id: str, content_hash: str) -> bytes | None:
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT data FROM originals WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash)
            ).fetchone()
        return bytes(row["data"]) if row else None

    def page(self, doc_id: str, content_hash: str, number: int) -> Page | None:
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT number, text, ocr, headings FROM pages WHERE doc_id = ? AND content_hash = ? AND number = ?",
                (doc_id, content_hash, number),
            ).fetchone()
        return _page(row) if row else None

    # ---- stored pages and reports ---------------------------------------------------------------
    def pages(self, doc_id: str, content_hash: str) -> Iterator[Page]:
        with closing(self._connect()) as conn:
            cursor = conn.execute(
                "SELECT number, text, ocr, headings FROM pages WHERE doc_id = ? AND content_hash = ? ORDER BY number",
                (doc_id, content_hash),
            )
            for row in cursor:
                yield _page(row)

    def has_pages(self, doc_id: str, content_hash: str) -> bool:
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT 1 FROM pages WHERE doc_id = ? AND content_hash = ? LIMIT 1", (doc_id, content_hash)
            ).fetchone()
        return row is not None

    def redactions(self, doc_id: str) -> list[Redaction]:
        """The redaction report of a document's live version."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT r.page, r.kind, r.placeholder, r.preview FROM redactions r JOIN documents d "
                "ON r.doc_id = d.doc_id AND r.content_hash = d.content_hash WHERE r.doc_id = ? "
                "ORDER BY r.page, r.rowid",
                (doc_id,),
            ).fetchall()
        return [Redaction(**dict(row)) for row in rows]

    # ---- the index manifest -----------------------------------------------------------------------
    def manifest(self) -> IndexManifest | None:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (_MANIFEST_KEY,)).fetchone()
        return IndexManifest.model_validate_json(row["value"]) if row else None

    def set_manifest(self, manifest: IndexManifest) -> None:
        """Record what the index is built with; also ends a rebuild."""
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_MANIFEST_KEY, manifest.model_dump_json()))
            conn.execute("DELETE FROM meta WHERE key = ?", (_REBUILD_KEY,))

    def rebuild_started(self) -> bool:
        """True while a rebuild runs, or after one that never finished (the index is incomplete)."""
        with closing(self._connect()) as conn:
            return conn.execute("SELECT 1 FROM meta WHERE key = ?", (_REBUILD_KEY,)).fetchone() is not None

    def start_rebuild(self) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_REBUILD_KEY, now().isoformat()))


def now() -> datetime:
    return datetime.now(UTC)


def _put(conn: sqlite3.Connection, record: DocumentRecord) -> None:
    notes = IngestNotes.model_validate(record.model_dump(include=set(IngestNotes.model_fields)))
    conn.execute(
        "INSERT OR REPLACE INTO documents (doc_id, source, file_type, content_hash, size_bytes, pages, chunks, "
        "ingested_at, notes, pending_chunks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.doc_id,
            record.source,
            record.file_type,
            record.content_hash,
            record.size_bytes,
            record.pages or 0,
            record.chunks,
            record.ingested_at.isoformat(),
            notes.model_dump_json(),
            record.pending_chunks,
        ),
    )


def _drop_version_rows(conn: sqlite3.Connection, doc_id: str, content_hash: str) -> None:
    conn.execute("DELETE FROM pages WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash))
    conn.execute("DELETE FROM redactions WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash))
    conn.execute("DELETE FROM originals WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash))
    conn.execute("DELETE FROM chunks_to_embed WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash))
    conn.execute("DELETE FROM embedded_chunks WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash))


def process_alive(pid: int) -> bool:
    """Whether a process id belongs to a running (not zombie) process on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _record(row: sqlite3.Row) -> DocumentRecord:
    fields = dict(row)
    notes = json.loads(fields.pop("notes", None) or "{}")
    if fields["file_type"] != "pdf":
        fields["pages"] = None  # stored as 0: a text file has no pages
    return DocumentRecord(**{**fields, **notes, "ingested_at": datetime.fromisoformat(row["ingested_at"])})


def _headings_json(page: Page) -> str:
    return json.dumps([heading.model_dump() for heading in page.headings])


def _page(row: sqlite3.Row) -> Page:
    headings = [PageHeading.model_validate(h) for h in json.loads(row["headings"] or "[]")]
    return Page(number=row["number"], text=row["text"], ocr=bool(row["ocr"]), headings=headings)
