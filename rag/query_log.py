"""The query log: one row per question in the SQLite file of RAGCHAT_HOME, for `ragchat logs` and the
app's Logs page. Every text field is masked (core/masking.py) before the INSERT, so an email, phone
number, card number, IP address or secret never reaches the file; ids, scores and timings are kept as
they are. Each row names its user ('' for the default user); a log shows only its own user's rows."""

from __future__ import annotations

import json
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from core.masking import mask, mask_data
from core.schemas import Answer, Citation, LoggedChunk, ModelInfo, QueryLogEntry
from core.sqlite_db import SQLiteTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS query_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    session_id TEXT,
    question TEXT NOT NULL,
    search_query TEXT NOT NULL,
    answer TEXT NOT NULL,
    refused INTEGER NOT NULL,
    guardrail TEXT,
    confidence REAL,
    low_confidence INTEGER NOT NULL,
    unsupported INTEGER NOT NULL,
    retrieved_json TEXT NOT NULL,
    citations_json TEXT NOT NULL,
    models_json TEXT NOT NULL,
    timings_json TEXT NOT NULL,
    error TEXT
)
"""
_IDS = frozenset({"chunk_id", "doc_id", "content_hash"})


class QueryLog(SQLiteTables):
    secure_delete = True

    def __init__(self, db_path: Path, user: str | None = None) -> None:
        """`user`: whose questions this log records and shows (None: the default user)."""
        super().__init__(db_path, _SCHEMA)
        self._add_columns("query_log", {"user_name": "TEXT NOT NULL DEFAULT ''"}, "query_log_by_user (user_name, id)")
        self._user = user or ""

    def record(self, answer: Answer) -> None:
        """Log one answered (or stopped) question with its retrieval candidates, marking the ones that
        went into the prompt (`answer.given`)."""
        given_ids = {hit.chunk.chunk_id for hit in answer.given.hits}
        retrieved = [
            LoggedChunk(
                chunk_id=hit.chunk.chunk_id,
                source=hit.chunk.source,
                page=hit.chunk.page or None,
                scores=hit.scores,
                given=hit.chunk.chunk_id in given_ids,
            ).model_dump(mode="json")
            for hit in answer.candidates
        ]
        citations = [c.model_dump(mode="json") for c in answer.citations]
        with closing(self._connect()) as conn, conn:
            conn.execute(
                """INSERT INTO query_log (at, session_id, question, search_query, answer, refused, guardrail,
                   confidence, low_confidence, unsupported, retrieved_json, citations_json, models_json,
                   timings_json, error, user_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    datetime.now(UTC).isoformat(timespec="milliseconds"),
                    answer.session_id,  # an identifier, kept as given so a session's rows can be found
                    mask(answer.question),
                    mask(answer.search_query),
                    mask(answer.answer),
                    int(answer.refused),
                    answer.guardrail.rule if answer.guardrail else None,
                    answer.confidence,
                    int(answer.low_confidence),
                    len(answer.unsupported_sentences),
                    json.dumps(mask_data(retrieved, _IDS)),
                    json.dumps(mask_data(citations, _IDS)),
                    answer.models.model_dump_json(),  # our own labels, not user text
                    json.dumps(answer.timings_ms),
                    mask(answer.error) if answer.error else None,
                    self._user,
                ),
            )

    def count(self) -> int:
        with closing(self._connect()) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM query_log WHERE user_name = ?", (self._user,)).fetchone()[0])

    def entries(self, limit: int = 50, offset: int = 0) -> list[QueryLogEntry]:
        """Newest first."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT * FROM query_log WHERE user_name = ? ORDER BY id DESC LIMIT ? OFFSET ?",
                (self._user, limit, offset),
            ).fetchall()
        return [
            QueryLogEntry(
                id=row["id"],
                at=datetime.fromisoformat(row["at"]),
                session_id=row["session_id"],
                question=row["question"],
                search_query=row["search_query"],
                answer=row["answer"],
                refused=bool(row["refused"]),
                guardrail=row["guardrail"],
                confidence=row["confidence"],
                low_confidence=bool(row["low_confidence"]),
                unsupported=row["unsupported"],
                retrieved=[LoggedChunk.model_validate(r) for r in json.loads(row["retrieved_json"])],
                citations=[Citation.model_validate(c) for c in json.loads(row["citations_json"])],
                models=ModelInfo.model_validate_json(row["models_json"]),
                timings_ms=json.loads(row["timings_json"]),
                error=row["error"],
            )
            for row in rows
        ]
