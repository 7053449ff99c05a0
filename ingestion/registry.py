"""The document registry: one SQLite row per indexed document, written only after its chunks are
in the vector store, so a row means "this version is fully searchable"."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from ragchat.schemas import DocumentRecord
from ragchat.sqlite_db import SQLiteTables

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
)
"""


class Registry(SQLiteTables):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, _SCHEMA)
        # Every search needs the live versions. One long-lived reader answers `PRAGMA data_version`,
        # which changes whenever any other connection (this process's writers, a CLI ingest running
        # beside the app) commits, so the cached map is re-read only after a change.
        self._reader = sqlite3.connect(self._path, timeout=30, check_same_thread=False)
        self._reader_lock = threading.Lock()
        self._live: tuple[int, dict[str, str]] | None = None

    def get(self, doc_id: str) -> DocumentRecord | None:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT * FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return _record(row) if row else None

    def put(self, record: DocumentRecord) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.doc_id,
                    record.source,
                    record.file_type,
                    record.content_hash,
                    record.size_bytes,
                    record.pages,
                    record.chunks,
                    record.ingested_at.isoformat(),
                ),
            )

    def delete(self, doc_id: str) -> bool:
        with closing(self._connect()) as conn, conn:
            return conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,)).rowcount > 0

    def all(self) -> list[DocumentRecord]:
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT * FROM documents ORDER BY source").fetchall()
        return [_record(row) for row in rows]

    def live_versions(self) -> dict[str, str]:
        """doc_id → content_hash of every fully indexed document version. Read-only for callers."""
        with self._reader_lock:
            (version,) = self._reader.execute("PRAGMA data_version").fetchone()
            if self._live is None or self._live[0] != version:
                rows = self._reader.execute("SELECT doc_id, content_hash FROM documents").fetchall()
                self._live = (version, dict(rows))
            return self._live[1]


def now() -> datetime:
    return datetime.now(UTC)


def _record(row: sqlite3.Row) -> DocumentRecord:
    return DocumentRecord(**{**dict(row), "ingested_at": datetime.fromisoformat(row["ingested_at"])})
