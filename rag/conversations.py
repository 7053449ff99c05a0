"""Conversations persist in the same SQLite file as the registry, so `ragchat ask --session ID` and
the app continue where they left off after a restart."""

from __future__ import annotations

import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from ragchat.schemas import Answer
from ragchat.sqlite_db import SQLiteTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    search_query TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, turn)
)
"""


class SessionSummary(BaseModel):
    session_id: str
    title: str
    turns: int
    updated_at: datetime


class ConversationStore(SQLiteTables):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, _SCHEMA)

    @staticmethod
    def new_session_id() -> str:
        return uuid.uuid4().hex[:12]

    def history(self, session_id: str, last: int | None = None) -> list[Answer]:
        """The session's answers (each holds its question and search query), oldest first; only the
        last `last` when given."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT answer_json FROM turns WHERE session_id = ? ORDER BY turn DESC LIMIT ?",
                (session_id, last if last is not None else -1),
            ).fetchall()
        return [Answer.model_validate_json(answer_json) for (answer_json,) in reversed(rows)]

    def append(self, session_id: str, answer: Answer) -> None:
        with closing(self._connect()) as conn, conn:
            (turn,) = conn.execute(
                "SELECT COALESCE(MAX(turn), -1) + 1 FROM turns WHERE session_id = ?", (session_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    turn,
                    answer.question,
                    answer.search_query,
                    answer.model_dump_json(),
                    datetime.now(UTC).isoformat(timespec="seconds"),
                ),
            )

    def replace_last(self, session_id: str, answer: Answer) -> None:
        """Update the session's latest turn (the memory graph's result is added after the answer)."""
        with closing(self._connect()) as conn, conn:
            conn.execute(
                """UPDATE turns SET answer_json = ? WHERE session_id = ?
                   AND turn = (SELECT MAX(turn) FROM turns WHERE session_id = ?)""",
                (answer.model_dump_json(), session_id, session_id),
            )

    def sessions(self, limit: int = 50) -> list[SessionSummary]:
        """Most recent first; the title is the session's first question."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                """SELECT session_id, COUNT(*), MAX(created_at),
                          (SELECT question FROM turns t2 WHERE t2.session_id = t.session_id ORDER BY turn LIMIT 1)
                   FROM turns t GROUP BY session_id ORDER BY MAX(created_at) DESC LIMIT ?""",
                (limit,),
            ).fetchall()
        return [
            SessionSummary(session_id=sid, turns=n, updated_at=datetime.fromisoformat(at), title=title)
            for sid, n, at, title in rows
        ]

    def delete(self, session_id: str) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM turns WHERE session_id = ?", (session_id,))
