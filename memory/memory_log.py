"""Every memory write, logged in the SQLite file of RAGCHAT_HOME, so the app and `ragchat memory`
can show what the last turn wrote (target, summary, confidence) after a restart. Like everything in
that file, the text is masked before it is written (core/masking.py): the Markdown memory files are
the record of what was remembered; this log only says what changed. Each row names its user ('' for
the default user), and a log shows only its own user's writes."""

from __future__ import annotations

import json
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from core.masking import mask_data
from core.schemas import MemoryEvent, MemoryWrite
from core.sqlite_db import SQLiteTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id TEXT NOT NULL,
    at TEXT NOT NULL,
    session_id TEXT,
    write_json TEXT NOT NULL
)
"""


class MemoryLog(SQLiteTables):
    def __init__(self, db_path: Path, user: str | None = None) -> None:
        """`user`: whose writes this log records and shows (None: the default user)."""
        super().__init__(db_path, _SCHEMA)
        self._add_columns(
            "memory_events", {"user_name": "TEXT NOT NULL DEFAULT ''"}, "memory_events_by_user (user_name, id)"
        )
        self._user = user or ""

    def record(self, turn_id: str, writes: list[MemoryWrite], session_id: str | None) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        with closing(self._connect()) as conn, conn:
            conn.executemany(
                "INSERT INTO memory_events (turn_id, at, session_id, write_json, user_name) VALUES (?, ?, ?, ?, ?)",
                [
                    (turn_id, at, session_id, json.dumps(mask_data(w.model_dump(mode="json"))), self._user)
                    for w in writes
                ],
            )

    def last_turn(self) -> list[MemoryEvent]:
        """The writes of this user's most recent turn that wrote anything."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                """SELECT turn_id, at, session_id, write_json FROM memory_events WHERE user_name = ? AND turn_id =
                   (SELECT turn_id FROM memory_events WHERE user_name = ? ORDER BY id DESC LIMIT 1) ORDER BY id""",
                (self._user, self._user),
            ).fetchall()
        return [
            MemoryEvent(
                **MemoryWrite.model_validate_json(raw).model_dump(),
                at=datetime.fromisoformat(at),
                session_id=sid,
                turn_id=turn,
            )
            for turn, at, sid, raw in rows
        ]

    def forget_turn(self, turn_id: str) -> None:
        """Drop a turn's rows (it was undone): the turn before it is then the last one."""
        with closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM memory_events WHERE turn_id = ? AND user_name = ?", (turn_id, self._user))
