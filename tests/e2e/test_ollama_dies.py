"""An Ollama server that dies mid-reply, through the whole pipeline (real index, embedder and support
check; the server is tests/ollama_fake.py on 127.0.0.1): the text written so far is kept, the answer
is marked incomplete with a clear reason, in the Python API, `ask --json`, `ask` and the app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.settings import PROJECT_ROOT, get_settings
from rag.conversations import ConversationStore
from rag.pipeline import AskOptions
from rag.query_log import QueryLog
from ragchat.application import open_session
from tests.cli_in_process import ragchat
from tests.fixtures import write_report_pdf
from tests.ollama_fake import RUNNER_ERROR, FakeOllama

QUESTION = "What was the Q2 revenue of the Westland region?"
REPLY = ["The Westland region's Q2 revenue", " was 8.15 million [1]", ", up from 7.35 million", " in Q1 [1]."]
PARTIAL = "The Westland region's Q2 revenue was 8.15 million"
APP = PROJECT_ROOT / "app.py"


@pytest.fixture
def indexed(home: Path, tmp_path: Path) -> Path:
    assert open_session(get_settings()).ingest_paths([write_report_pdf(tmp_path / "r.pdf")])[0].status == "indexed"
    return home


def use_ollama(monkeypatch: pytest.MonkeyPatch, server: FakeOllama) -> None:
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "ollama")
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", "llama3.2")
    monkeypatch.setenv("OLLAMA_HOST", server.host)


@pytest.fixture
def dying(monkeypatch: pytest.MonkeyPatch, indexed: Path) -> Iterator[FakeOllama]:
    """Ollama's process dies after two parts: the connection closes mid-body, no `done` part."""
    with FakeOllama(reply=REPLY, die_after=2) as server:
        use_ollama(monkeypatch, server)
        yield server


def test_the_partial_answer_is_kept_marked_and_explained(dying: FakeOllama) -> None:
    session = open_session(get_settings())
    answer = session.ask(QUESTION, AskOptions(session_id="s1"))
    assert answer.incomplete and not answer.refused
    assert answer.answer.startswith(PARTIAL)
    assert answer.error == f"Ollama at {dying.host} broke off the connection after 2 reply parts: " + (
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )
    assert [c.page for c in answer.citations] == [2]  # the partial text is still checked and cited
    stored = ConversationStore(get_settings().db_path).history("s1")[-1]
    assert stored.incomplete and stored.answer.startswith(PARTIAL)
    assert "_The model stopped before finishing: Ollama at " in (session.export_conversation("s1") or "")
    logged = QueryLog(get_settings().db_path).entries()[0].error or ""
    assert "broke off the connection after 2 reply parts" in logged  # masked: the host reads [IP]


def test_a_model_runner_crash_line_is_reported_with_ollamas_words(
    monkeypatch: pytest.MonkeyPatch, indexed: Path
) -> None:
    with FakeOllama(reply=REPLY, die_after=3, death="error") as server:
        use_ollama(monkeypatch, server)
        answer = open_session(get_settings()).ask(QUESTION)
    assert answer.incomplete and answer.answer == PARTIAL + " [1], up from 7.35 million"
    assert answer.error == f"Ollama (llama3.2) stopped mid-reply after 3 reply parts: {RUNNER_ERROR}"


def test_a_server_that_dies_before_any_text_is_no_partial_answer(
    monkeypatch: pytest.MonkeyPatch, indexed: Path
) -> None:
    with FakeOllama(reply=REPLY, die_after=0) as server:
        use_ollama(monkeypatch, server)
        answer = open_session(get_settings()).ask(QUESTION)
    assert not answer.incomplete and answer.citations == []
    assert answer.answer.startswith("The model could not answer: Ollama at") and "broke off" in answer.answer


def test_ask_json_and_text_mark_the_answer_incomplete(dying: FakeOllama) -> None:
    result = ragchat("ask", QUESTION, "--json")
    assert result.returncode == 1, result.stderr
    answer = json.loads(result.stdout)
    assert answer["incomplete"] is True and answer["answer"].startswith(PARTIAL)
    assert "broke off the connection after 2 reply parts" in answer["error"]
    assert answer["timings_ms"]["queue_wait_ms"] == 0.0  # Ollama queues on its server, not here

    text = ragchat("ask", QUESTION)
    assert text.returncode == 1
    assert text.stdout.startswith(PARTIAL)
    assert "The model stopped before finishing: Ollama at" in text.stderr


def test_the_app_shows_the_partial_text_with_a_warning(dying: FakeOllama) -> None:
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=240).run()
    at.chat_input[0].set_value(QUESTION).run()
    assert not at.exception
    assistant = next(m for m in at.chat_message if m.name == "assistant")
    assert any(m.value.startswith(PARTIAL) for m in assistant.markdown)
    warnings = [w.value for w in assistant.warning]
    assert warnings == [
        f"The model stopped before finishing: Ollama at {dying.host} broke off the connection after 2 reply "
        "parts: peer closed connection without sending complete message body (incomplete chunked read)"
    ]
