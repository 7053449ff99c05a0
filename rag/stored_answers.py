"""Answers to requests about whole documents, kept by what made them: the same request over the same
document versions, asked again, is answered at once instead of being written again (the fast reading
of a long document costs seconds of prefill every time).

The key is the prompt itself (its messages hold the request and the documents' passages), the model
and the sampling: at temperature 0 the model writes the same reply to the same prompt, so the stored
reply is the one it would write. Each answer records the document versions it read; a replaced or
deleted document takes its answers with it (`keep_only`). A reply that was interrupted, or that is not
an answer (empty, a loop), is not kept."""

from __future__ import annotations

import hashlib
import json
from contextlib import closing
from pathlib import Path

from core.sqlite_db import SQLiteTables
from providers.llm.base import ChatMessage, Sampling

_SCHEMA = """
CREATE TABLE IF NOT EXISTS document_answers (
    key TEXT PRIMARY KEY,
    versions_json TEXT NOT NULL,
    reply TEXT NOT NULL
)
"""


class StoredAnswers(SQLiteTables):
    """Replies to document requests by prompt, model and sampling, with the versions they read."""

    secure_delete = True  # a request is what someone typed

    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, _SCHEMA)

    @staticmethod
    def key(messages: list[ChatMessage], sampling: Sampling, model: str) -> str:
        digest = hashlib.sha256()
        for part in (model, sampling.model_dump_json(), *(f"{m.role}\0{m.content}" for m in messages)):
            digest.update(part.encode("utf-8") + b"\0")
        return digest.hexdigest()

    def get(self, key: str) -> str | None:
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT reply FROM document_answers WHERE key = ?", (key,)).fetchone()
        return str(row["reply"]) if row else None

    def put(self, key: str, versions: dict[str, str], reply: str) -> None:
        """Keep `reply` under `key`; `versions`: doc_id → content_hash of the documents it read."""
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT OR REPLACE INTO document_answers VALUES (?, ?, ?)",
                (key, json.dumps(versions, sort_keys=True), reply),
            )

    def keep_only(self, live: dict[str, str]) -> int:
        """Drop every answer that read a version no longer live (doc_id → content_hash); returns how many."""
        with closing(self._connect()) as conn, conn:
            rows = conn.execute("SELECT key, versions_json FROM document_answers").fetchall()
            stale = [row["key"] for row in rows if not _all_live(json.loads(row["versions_json"]), live)]
            conn.executemany("DELETE FROM document_answers WHERE key = ?", [(key,) for key in stale])
        return len(stale)


def _all_live(versions: dict[str, str], live: dict[str, str]) -> bool:
    return all(live.get(doc_id) == content_hash for doc_id, content_hash in versions.items())
