"""The SQLite stores keep users apart: conversations, the memory log, the query log, the rate limit;
and a file from before users existed opens with its rows belonging to the default user."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.schemas import MemoryWrite
from memory.memory_log import MemoryLog
from rag.conversations import ConversationStore, ForeignSession
from rag.query_log import QueryLog
from rag.rate_limit import RateLimiter
from tests.unit.test_conversations import answer

# The turns table as it was before users and candidates (the oldest file the store must open).
_OLD_TURNS = """
CREATE TABLE turns (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    search_query TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, turn)
)
"""


def test_each_user_sees_and_continues_only_their_own_conversations(tmp_path: Path) -> None:
    db = tmp_path / "ragchat.sqlite3"
    alice, bob, default = ConversationStore(db, "alice"), ConversationStore(db, "bob"), ConversationStore(db)
    alice.append("a1", answer("alice's question"))
    bob.append("b1", answer("bob's question"))
    default.append("d1", answer("the default user's question"))

    assert [s.session_id for s in alice.sessions()] == ["a1"]
    assert [s.session_id for s in bob.sessions()] == ["b1"]
    assert [s.session_id for s in default.sessions()] == ["d1"]
    assert bob.history("a1") == [] and bob.summary("a1") is None
    assert not bob.delete("a1") and [t.question for t in alice.history("a1")] == ["alice's question"]

    for foreign in (lambda: bob.check_session("a1"), lambda: bob.append("a1", answer("sneaking in"))):
        with pytest.raises(ForeignSession, match="'a1' belongs to another user"):
            foreign()
    with pytest.raises(ForeignSession):
        default.append("a1", answer("the default user is another user too"))
    bob.check_session("b1")  # their own: fine
    bob.check_session("new-id")  # unused: fine, it starts a conversation
    bob.replace_last("a1", answer("overwritten?"))
    assert [t.answer for t in alice.history("a1")] == ["answer to alice's question"]


def test_an_older_file_opens_with_its_conversations_belonging_to_the_default_user(tmp_path: Path) -> None:
    db = tmp_path / "ragchat.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute(_OLD_TURNS)
        conn.execute(
            "INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?)",
            ("old", 0, "old question", "old question", answer("old question").model_dump_json(), "2025-01-01T00:00:00"),
        )
    default = ConversationStore(db)
    assert [t.question for t in default.history("old")] == ["old question"]
    default.append("old", answer("a follow-up"))
    assert [s.turns for s in default.sessions()] == [2]
    alice = ConversationStore(db, "alice")
    assert alice.sessions() == [] and alice.history("old") == []
    with pytest.raises(ForeignSession):
        alice.check_session("old")


def test_the_memory_log_shows_each_user_their_own_last_turn(tmp_path: Path) -> None:
    db = tmp_path / "ragchat.sqlite3"
    alice, bob = MemoryLog(db, "alice"), MemoryLog(db, "bob")
    alice.record("t1", [MemoryWrite(target="USER", summary="User is a Project Finance Analyst.")], "s1")
    bob.record("t2", [MemoryWrite(target="USER", summary="User prefers weekly summaries on Mondays.")], "s2")
    assert [e.summary for e in alice.last_turn()] == ["User is a Project Finance Analyst."]
    assert [e.summary for e in bob.last_turn()] == ["User prefers weekly summaries on Mondays."]
    assert MemoryLog(db).last_turn() == []


def test_the_query_log_shows_each_user_their_own_questions(tmp_path: Path) -> None:
    db = tmp_path / "ragchat.sqlite3"
    alice, bob = QueryLog(db, "alice"), QueryLog(db, "bob")
    alice.record(answer("alice asks"))
    bob.record(answer("bob asks"))
    bob.record(answer("bob asks again"))
    assert (alice.count(), bob.count(), QueryLog(db).count()) == (1, 2, 0)
    assert [e.question for e in alice.entries()] == ["alice asks"]
    assert [e.question for e in bob.entries()] == ["bob asks again", "bob asks"]


def test_the_rate_limit_counts_per_user_and_session(tmp_path: Path) -> None:
    db = tmp_path / "ragchat.sqlite3"
    alice, bob, default = (RateLimiter(db, per_minute=1, user=user) for user in ("alice", "bob", None))
    assert alice.acquire("tab-1") is None
    assert alice.acquire("tab-1") is not None  # alice's one slot is taken
    assert bob.acquire("tab-1") is None  # the same session key is another window for bob
    assert default.acquire("tab-1") is None
    assert alice.acquire("tab-2") is None
