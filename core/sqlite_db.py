"""The one SQLite file in RAGCHAT_HOME (registry, conversations, logs): a short-lived connection per
operation, so the app's threads and a concurrent CLI never share one."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


class SQLiteTables:
    """Base for a store that owns some tables of the file; creates them on first use.

    A store of what people typed sets `secure_delete`: SQLite then overwrites deleted rows with zeros
    instead of leaving them in free pages of the file."""

    secure_delete = False

    def __init__(self, db_path: Path, schema: str) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self._path = db_path
        conn = self._connect()
        try:
            with conn:
                conn.executescript(schema)
        finally:
            conn.close()

    def _add_columns(self, table: str, columns: dict[str, str], index: str | None = None) -> None:
        """Add the columns an older file of this table lacks (name → declaration with its default),
        then the index `index` ("name (columns)") if it is missing."""
        with closing(self._connect()) as conn, conn:
            present = {row["name"] for row in conn.execute(f"PRAGMA table_info({table})")}
            for column, declaration in columns.items():
                if column not in present:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            if index:
                name, _, indexed = index.partition(" ")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} {indexed}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=30)
        conn.row_factory = sqlite3.Row
        if self.secure_delete:
            conn.execute("PRAGMA secure_delete = ON")
        return conn
