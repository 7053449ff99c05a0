"""A sliding-window rate limit per session, kept in the SQLite file of RAGCHAT_HOME.

In SQLite rather than in memory because each `ragchat ask --session ID` is its own process: the
window has to outlive it. The app keys it on the browser session (one key per tab, kept across
"New conversation"), the CLI on the `--session` id, each within its user; a question with no
session (a one-off `ragchat ask`, a script calling Session.ask) is not limited.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from core.sqlite_db import SQLiteTables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_events (key TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS rate_events_key_at ON rate_events (key, at);
"""
WINDOW_S = 60.0


class RateLimiter(SQLiteTables):
    def __init__(
        self, db_path: Path, per_minute: int, clock: Callable[[], float] = time.time, user: str | None = None
    ) -> None:
        """`user`: keys are counted per user (None: the default user, whose keys are as before)."""
        super().__init__(db_path, _SCHEMA)
        self.limit = per_minute
        self._clock = clock
        self._scope = f"{user}\n" if user else ""

    def acquire(self, key: str) -> float | None:
        """Count one question for `key` if it is under the limit (None); otherwise record nothing and
        return the seconds until the oldest question in the window leaves it."""
        if self.limit <= 0:
            return None
        now = self._clock()
        # A CLI session id may be anything; one user's key never counts for another user.
        hashed = hashlib.sha256((self._scope + key).encode("utf-8")).hexdigest()[:16]
        with closing(self._connect()) as conn, conn:
            conn.execute("BEGIN IMMEDIATE")  # two processes on one session cannot both take the last slot
            conn.execute("DELETE FROM rate_events WHERE at <= ?", (now - WINDOW_S,))
            count, oldest = conn.execute(
                "SELECT COUNT(*), MIN(at) FROM rate_events WHERE key = ?", (hashed,)
            ).fetchone()
            if count >= self.limit:
                return max(oldest + WINDOW_S - now, 0.1)
            conn.execute("INSERT INTO rate_events VALUES (?, ?)", (hashed, now))
        return None
