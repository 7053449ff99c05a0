"""Several users on one deployment, with the real 0.5B model, the packaged embedder, embedded Chroma
and real files: two users' memories never mix (two sessions at once), company memory is shared,
conversations are private, and documents are shared or per user as set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.schemas import Answer
from core.settings import get_settings
from rag.conversations import ForeignSession
from rag.pipeline import AskOptions
from ragchat.application import open_session
from ragchat.session import Session
from tests.conftest import TEST_LLM

NOTE = "# Travel policy\n\nThe Zephyr office reimburses train tickets in first class for trips over four hours.\n"
NOTE_QUERY = "Zephyr office train tickets first class"


def session_at(home: Path, **overrides: object) -> Session:
    return open_session(
        get_settings(
            home=home, llm_provider="llamacpp", llm_model=TEST_LLM, reranker_dir=home / "no-reranker", **overrides
        )
    )


def ragchat(home: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGCHAT_HOME": str(home), "RAGCHAT_LLM_PROVIDER": "llamacpp", "RAGCHAT_LLM_MODEL": TEST_LLM}
    env |= variables
    return subprocess.run(
        [sys.executable, "-m", "ragchat.cli", *args], capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("users-home")


@pytest.fixture(scope="module")
def root(shared_home: Path) -> Session:
    return session_at(shared_home)


def test_two_users_stating_facts_at_once_each_get_only_their_own(root: Session, shared_home: Path) -> None:
    alice, bob = root.app.session("alice"), root.app.session("Bob")
    assert root.app.session("ALICE") is alice and bob.user == "bob" and root.app.session(None) is root
    start = threading.Barrier(2)

    def say(session: Session, conversation: str, message: str) -> Answer:
        start.wait(timeout=60)
        return session.ask(message, AskOptions(session_id=conversation))

    with ThreadPoolExecutor(max_workers=2) as pool:
        said_by_alice = pool.submit(say, alice, "alice-1", "I'm a Project Finance Analyst.")
        said_by_bob = pool.submit(say, bob, "bob-1", "I prefer weekly summaries on Mondays.")
        by_alice, by_bob = said_by_alice.result(timeout=600), said_by_bob.result(timeout=600)

    assert [(w.target, w.summary) for w in by_alice.memory_writes] == [
        ("USER", "The user is a Project Finance Analyst.")
    ]
    assert [(w.target, w.summary) for w in by_bob.memory_writes] == [
        ("USER", "The user prefers weekly summaries on Mondays.")
    ]
    users = shared_home / "users"
    assert _entries(users / "alice" / "USER_MEMORY.md") == ["The user is a Project Finance Analyst."]
    assert _entries(users / "bob" / "USER_MEMORY.md") == ["The user prefers weekly summaries on Mondays."]
    assert not (shared_home / "USER_MEMORY.md").exists()  # the default user's memory is untouched
    assert alice.memory.facts().user == ["The user is a Project Finance Analyst."]
    assert [e.summary for e in bob.memory.last_turn()] == ["The user prefers weekly summaries on Mondays."]
    # One model, one embedder for everyone: bob's graph ran on the instance alice's did.
    assert (
        alice.app.llm() is bob.app.llm() is root.app.llm()
        and alice.app.embedder is bob.app.embedder is root.app.embedder
    )

    # Company memory is the company's: what alice states, bob's answers see; it lives in RAGCHAT_HOME.
    said = alice.ask("Our company just migrated from AWS to GCP last quarter.", AskOptions(session_id="alice-1"))
    [(target, migration)] = [(w.target, w.summary) for w in said.memory_writes]
    assert target == "COMPANY" and "GCP" in migration
    assert _entries(shared_home / "COMPANY_MEMORY.md") == [migration]
    assert bob.memory.facts().company == [migration] and bob.memory.facts().user == [
        "The user prefers weekly summaries on Mondays."
    ]
    assert "The user is a Project Finance Analyst." not in (users / "bob" / "USER_MEMORY.md").read_text(
        encoding="utf-8"
    )


def test_a_user_can_neither_list_nor_continue_another_users_conversation(root: Session, shared_home: Path) -> None:
    alice, bob = root.app.session("alice"), root.app.session("bob")
    if not alice.conversations.sessions():  # when run on its own
        alice.ask("Who painted the Mona Lisa?", AskOptions(session_id="alice-1"))
    assert "alice-1" in [s.session_id for s in alice.conversations.sessions()]
    assert "alice-1" not in [s.session_id for s in bob.conversations.sessions()]
    assert bob.export_conversation("alice-1") is None
    with pytest.raises(ForeignSession, match="'alice-1' belongs to another user"):
        bob.ask("And what did I say before?", AskOptions(session_id="alice-1"))
    with pytest.raises(ForeignSession):
        root.ask("Anything?", AskOptions(session_id="alice-1"))  # the default user is another user too
    assert all(t.question != "And what did I say before?" for t in alice.conversations.history("alice-1"))

    listed = ragchat(shared_home, "history", "list", "--user", "bob", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "alice-1" not in [s["session_id"] for s in json.loads(listed.stdout)]
    asked = ragchat(shared_home, "ask", "And what did I say before?", "--session", "alice-1", "--user", "bob")
    assert asked.returncode == 2
    assert asked.stderr.strip().splitlines()[-1] == (
        "ragchat: The conversation 'alice-1' belongs to another user: start a new one or pick another id."
    )
    exported = ragchat(shared_home, "history", "export", "alice-1", "--user", "bob")
    assert exported.returncode == 1 and "no conversation 'alice-1'" in exported.stderr
    bad = ragchat(shared_home, "memory", "--user", "../alice")
    assert bad.returncode == 2 and "is not a valid user name" in bad.stderr


def test_cli_memory_of_a_named_user(root: Session, shared_home: Path) -> None:
    alice = json.loads(ragchat(shared_home, "memory", "--user", "Alice", "--json").stdout)
    assert alice["USER"] == ["The user is a Project Finance Analyst."]
    assert Path(alice["files"]["USER"]) == shared_home / "users" / "alice" / "USER_MEMORY.md"
    assert Path(alice["files"]["COMPANY"]) == shared_home / "COMPANY_MEMORY.md"
    env_bob = ragchat(shared_home, "memory", "--json", RAGCHAT_USER="bob")
    assert json.loads(env_bob.stdout)["USER"] == ["The user prefers weekly summaries on Mondays."]
    default = json.loads(ragchat(shared_home, "memory", "--json").stdout)
    assert default["USER"] == [] and Path(default["files"]["USER"]) == shared_home / "USER_MEMORY.md"


@pytest.mark.parametrize("documents", ["per_user", "shared"])
def test_documents_are_per_user_or_shared_as_set(tmp_path: Path, documents: str) -> None:
    root = session_at(tmp_path / "home", documents=documents)
    alice, bob = root.app.session("alice"), root.app.session("bob")
    note = tmp_path / "travel.md"
    note.write_text(NOTE, encoding="utf-8")
    assert alice.ingest_paths([note])[0].status == "indexed"
    assert [h.chunk.source for h in alice.search(NOTE_QUERY).hits] == ["travel.md"]
    found_by_bob = [h.chunk.source for h in bob.search(NOTE_QUERY).hits]
    bob_docs = [d.source for d in bob.documents()]
    if documents == "per_user":
        assert found_by_bob == [] and bob_docs == [] and root.documents() == []
        assert (
            alice.document_index.store is not bob.document_index.store
            and alice.document_index.store._name == "ragchat__alice"
        )
        assert (tmp_path / "home" / "users" / "alice" / "documents.sqlite3").is_file()
        for user, listed in (("alice", ["travel.md"]), ("bob", [])):
            shown = ragchat(tmp_path / "home", "docs", "--user", user, "--json", RAGCHAT_DOCUMENTS="per_user")
            assert [d["source"] for d in json.loads(shown.stdout)] == listed
    else:
        assert found_by_bob == ["travel.md"] and bob_docs == ["travel.md"]
        assert alice.document_index is bob.document_index is root.document_index
    assert alice.app.embedder is bob.app.embedder  # one embedder either way


def _entries(path: Path) -> list[str]:
    return [line[2:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("- ")]
