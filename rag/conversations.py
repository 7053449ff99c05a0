"""Conversations persist in the same SQLite file as the registry, so `ragchat ask --session ID` and
the app continue where they left off after a restart, and an old conversation reopens with its
sources, retrieval details, support checks and notices.

What is stored: each turn's Answer and its retrieval candidates, with every text field masked
(core/masking.py: emails, phone numbers, card numbers, IP addresses, secrets such as "my password is
…") before it is written. A reopened or exported conversation shows the placeholders ([EMAIL],
[SECRET], …); the live chat showed the text as typed. Session ids are identifiers and kept as given.

Each turn records its user (`user_name`, '' for the default user). A store is bound to one user and
sees only that user's conversations; an id another user's conversation has is refused (ForeignSession).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from core.masking import mask, mask_data
from core.schemas import Answer, Hit
from core.sqlite_db import SQLiteTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    search_query TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    candidates_json TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (session_id, turn)
)
"""
# Values that are identifiers or our own labels, never user text: not masked.
_KEEP = frozenset({"session_id", "chunk_id", "doc_id", "content_hash", "models"})


class ForeignSession(ValueError):
    """A session id that another user's conversation already has."""


class SessionSummary(BaseModel):
    session_id: str
    title: str
    turns: int
    updated_at: datetime


class ConversationStore(SQLiteTables):
    secure_delete = True  # a deleted conversation is overwritten in the file, not left in free pages

    def __init__(self, db_path: Path, user: str | None = None) -> None:
        """`user`: whose conversations this store reads and writes (None: the default user)."""
        super().__init__(db_path, _SCHEMA)
        # Columns a file from before them lacks: existing turns belong to the default user.
        self._add_columns(
            "turns",
            {"candidates_json": "TEXT NOT NULL DEFAULT '[]'", "user_name": "TEXT NOT NULL DEFAULT ''"},
            index="turns_by_user (user_name, session_id)",
        )
        self._user = user or ""

    @staticmethod
    def new_session_id() -> str:
        return uuid.uuid4().hex[:12]

    def check_session(self, session_id: str) -> None:
        """ForeignSession when another user's conversation has this id. Session ids are unique across
        users (the table's key), so a user can neither read nor continue anyone else's."""
        with closing(self._connect()) as conn:
            self._check_owner(conn, session_id)

    def _check_owner(self, conn: sqlite3.Connection, session_id: str) -> None:
        row = conn.execute("SELECT user_name FROM turns WHERE session_id = ? LIMIT 1", (session_id,)).fetchone()
        if row is not None and row[0] != self._user:
            raise ForeignSession(
                f"The conversation {session_id!r} belongs to another user: start a new one or pick another id."
            )

    def history(self, session_id: str, last: int | None = None, with_candidates: bool = False) -> list[Answer]:
        """The session's answers (each holds its question and search query), oldest first; only the
        last `last` when given. `with_candidates` also loads each turn's retrieval candidates into
        `Answer.candidates` (for reopening a conversation in the app)."""
        column = "candidates_json" if with_candidates else "'[]'"
        with closing(self._connect()) as conn:
            rows = conn.execute(
                f"SELECT answer_json, {column} FROM turns WHERE session_id = ? AND user_name = ? "
                "ORDER BY turn DESC LIMIT ?",
                (session_id, self._user, last if last is not None else -1),
            ).fetchall()
        answers = []
        for answer_json, candidates_json in reversed(rows):
            answer = Answer.model_validate_json(answer_json)
            hits = [Hit.model_validate(h) for h in json.loads(candidates_json)]
            answers.append(answer.model_copy(update={"candidates": hits}) if hits else answer)
        return answers

    def append(self, session_id: str, answer: Answer) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute("BEGIN IMMEDIATE")  # the owner check and the insert as one step
            self._check_owner(conn, session_id)
            (turn,) = conn.execute(
                "SELECT COALESCE(MAX(turn), -1) + 1 FROM turns WHERE session_id = ?", (session_id,)
            ).fetchone()
            conn.execute(
                """INSERT INTO turns (session_id, turn, question, search_query, answer_json, created_at,
                   candidates_json, user_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    session_id,
                    turn,
                    mask(answer.question),
                    mask(answer.search_query),
                    _masked_json(answer),
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    _masked_candidates(answer),
                    self._user,
                ),
            )

    def replace_last(self, session_id: str, answer: Answer) -> None:
        """Update the session's latest turn (the memory graph's result is added after the answer)."""
        with closing(self._connect()) as conn, conn:
            conn.execute(
                """UPDATE turns SET answer_json = ? WHERE session_id = ? AND user_name = ?
                   AND turn = (SELECT MAX(turn) FROM turns WHERE session_id = ?)""",
                (_masked_json(answer), session_id, self._user, session_id),
            )

    def sessions(self, limit: int = 50) -> list[SessionSummary]:
        """Most recent first; the title is the session's first question."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                """SELECT session_id, COUNT(*), MAX(created_at),
                          (SELECT question FROM turns t2 WHERE t2.session_id = t.session_id ORDER BY turn LIMIT 1)
                   FROM turns t WHERE user_name = ?
                   GROUP BY session_id ORDER BY MAX(created_at) DESC, MAX(rowid) DESC LIMIT ?""",
                (self._user, limit),
            ).fetchall()
        return [
            SessionSummary(session_id=sid, turns=n, updated_at=datetime.fromisoformat(at), title=title)
            for sid, n, at, title in rows
        ]

    def summary(self, session_id: str) -> SessionSummary | None:
        with closing(self._connect()) as conn:
            row = conn.execute(
                """SELECT COUNT(*), MAX(created_at),
                          (SELECT question FROM turns WHERE session_id = ? ORDER BY turn LIMIT 1)
                   FROM turns WHERE session_id = ? AND user_name = ?""",
                (session_id, session_id, self._user),
            ).fetchone()
        count, at, title = row
        if not count:
            return None
        return SessionSummary(session_id=session_id, turns=count, updated_at=datetime.fromisoformat(at), title=title)

    def delete(self, session_id: str) -> bool:
        with closing(self._connect()) as conn, conn:
            deleted = conn.execute("DELETE FROM turns WHERE session_id = ? AND user_name = ?", (session_id, self._user))
            return deleted.rowcount > 0


def _masked_json(answer: Answer) -> str:
    return json.dumps(mask_data(answer.model_dump(mode="json"), _KEEP), ensure_ascii=False)


def _masked_candidates(answer: Answer) -> str:
    return json.dumps(mask_data([h.model_dump(mode="json") for h in answer.candidates], _KEEP), ensure_ascii=False)
