"""The embedded 0.5B model behind its generation queue: a second caller waits its turn and hears its
place, a consumer that stops reading (closes the stream, or drops it as a Streamlit rerun does)
frees the model at once, and the answer's timings say how long the question was queued."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from core.settings import get_settings
from providers.llm.base import ChatMessage, LLMError
from providers.llm.factory import resolve_gguf
from providers.llm.llamacpp import LlamaCppLLM
from rag.pipeline import AskOptions
from ragchat.application import open_session
from tests.conftest import TEST_LLM
from tests.fixtures import write_report_pdf

LONG = [ChatMessage(role="user", content="Count from 1 to 300, one number per line.")]
SHORT = [ChatMessage(role="user", content="Reply with the single word: ready")]
FREED_WITHIN_S = 5.0


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    path, label = resolve_gguf(TEST_LLM, get_settings().model_dir)
    return LlamaCppLLM(path, label, queue_timeout_s=120)


def wait_until_free(llm: LlamaCppLLM) -> float:
    started = time.monotonic()
    while llm.queue.active:
        assert time.monotonic() - started < FREED_WITHIN_S, "the model's slot was not freed"
        time.sleep(0.01)
    return time.monotonic() - started


def test_a_second_caller_waits_its_turn_and_hears_its_place(llm: LlamaCppLLM) -> None:
    first = llm.stream(LONG, max_tokens=48, temperature=0.0)
    assert next(first)  # the first generation holds the model
    heard: list[int] = []
    reply: list[str] = []
    second = threading.Thread(target=lambda: reply.append(llm.complete(SHORT, 8, 0.0, on_queued=heard.append)))
    second.start()
    deadline = time.monotonic() + FREED_WITHIN_S
    while not heard:
        assert time.monotonic() < deadline, "the second caller was never told it is queued"
        time.sleep(0.01)
    assert heard[0] == 1 and llm.queue.active == 1
    rest = "".join(first)  # the first one finishes undisturbed, then the second one runs
    second.join(60)
    assert "10" in rest
    assert heard[-1] == 0 and "ready" in reply[0].lower()
    assert llm.queue.max_active == 1


def test_complete_json_queues_too(llm: LlamaCppLLM) -> None:
    first = llm.stream(LONG, max_tokens=24, temperature=0.0)
    next(first)
    replies: list[str] = []
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    caller = threading.Thread(target=lambda: replies.append(llm.complete_json(SHORT, schema, 16)))
    caller.start()
    deadline = time.monotonic() + FREED_WITHIN_S
    while not llm.queue.waiting:
        assert time.monotonic() < deadline, "complete_json did not wait for the running generation"
        time.sleep(0.01)
    first.close()
    caller.join(60)
    assert replies and '"ok"' in replies[0]


def test_closing_a_stream_mid_reply_frees_the_model_at_once(llm: LlamaCppLLM) -> None:
    stream = llm.stream(LONG, max_tokens=300, temperature=0.0)
    next(stream)
    stream.close()
    # llama.cpp stops at its next token (~20 ms) instead of writing all 300 (~5 s here).
    assert wait_until_free(llm) < 2.0


def test_a_dropped_stream_frees_the_model_without_close(llm: LlamaCppLLM) -> None:
    """A Streamlit rerun raises inside write_stream; the abandoned generator is closed when dropped."""

    class Rerun(BaseException):
        pass

    def page() -> None:
        for count, _ in enumerate(llm.stream(LONG, max_tokens=300, temperature=0.0)):
            if count == 2:
                raise Rerun

    with pytest.raises(Rerun):
        page()
    wait_until_free(llm)
    assert "ready" in llm.complete(SHORT, 8, 0.0).lower()


def test_a_full_queue_is_a_clear_error(llm: LlamaCppLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm.queue, "limit", 0)
    stream = llm.stream(LONG, max_tokens=48, temperature=0.0)
    next(stream)
    with pytest.raises(LLMError, match="The model is busy with 1 other question; try again in a minute"):
        llm.complete(SHORT, 8, 0.0)
    stream.close()
    wait_until_free(llm)


def test_the_answer_says_how_long_it_was_queued(home: Path, tmp_path: Path) -> None:
    session = open_session(get_settings())
    assert session.ingest_paths([write_report_pdf(tmp_path / "report.pdf")])[0].status == "indexed"
    held = session.app.llm().queue.acquire()  # another user's generation
    threading.Timer(1.5, held.release).start()
    heard: list[int] = []
    answer = session.ask("What was the Q2 revenue of the Westland region?", AskOptions(on_queued=heard.append))
    assert heard[0] == 1 and heard[-1] == 0
    assert answer.timings_ms["queue_wait_ms"] >= 1000
    assert answer.timings_ms["first_token_ms"] >= answer.timings_ms["queue_wait_ms"]
    assert "8.15" in answer.answer and not answer.error
