"""The chat page while the embedded model is busy with another user's question: the page says how many
questions are ahead, then the streamed answer takes the notice's place (real app, real 0.5B model)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import ui.chat_page
from core.settings import PROJECT_ROOT, get_settings
from rag.conversations import ConversationStore
from ragchat.application import open_session
from tests.fixtures import write_report_pdf
from ui.common import get_app

APP = PROJECT_ROOT / "app.py"
QUESTION = "What was the Q2 revenue of the Westland region?"
HELD_S = 1.5


def _notice_app(positions: list[int]) -> None:
    import streamlit as st

    from ui.chat_page import render_queue_notice

    slot = st.empty()
    for ahead in positions:
        render_queue_notice(slot, ahead)


def test_the_notice_counts_the_questions_ahead_and_goes_when_the_turn_comes() -> None:
    at = AppTest.from_function(_notice_app, args=([3, 1],)).run()
    assert [i.value for i in at.info] == [
        "Queued: 1 question ahead of yours… The model answers one question at a time."
    ]
    at = AppTest.from_function(_notice_app, args=([2],)).run()
    assert at.info[0].value.startswith("Queued: 2 questions ahead of yours…")
    at = AppTest.from_function(_notice_app, args=([2, 0],)).run()
    assert not at.info


def test_a_question_asked_while_the_model_is_busy_waits_then_streams(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The only other user of the model here is the held question (no document card written after it).
    monkeypatch.setenv("RAGCHAT_DOCUMENT_CARDS", "false")
    assert open_session(get_settings()).ingest_paths([write_report_pdf(tmp_path / "r.pdf")])[0].status == "indexed"
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=240).run()
    queue = get_app().llm().queue  # the app's own model (st.cache_resource), busy with another user
    held = queue.acquire()

    shown: list[int] = []
    render = ui.chat_page.render_queue_notice
    monkeypatch.setattr(
        ui.chat_page, "render_queue_notice", lambda slot, ahead: (shown.append(ahead), render(slot, ahead))
    )

    def finish_the_other_question() -> None:
        deadline = time.monotonic() + 60
        while not queue.waiting and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(HELD_S)
        held.release()

    other = threading.Thread(target=finish_the_other_question)
    other.start()
    at.chat_input[0].set_value(QUESTION).run()
    other.join()
    assert not at.exception
    assert shown[0] == 1 and shown[-1] == 0  # "1 question ahead", then the turn came
    assert not [i.value for i in at.main.info if i.value.startswith("Queued")]  # replaced by the answer
    assistant = next(m for m in at.chat_message if m.name == "assistant")
    assert any("8.15" in m.value for m in assistant.markdown)
    turn = ConversationStore(get_settings().db_path).history(at.session_state.session_id)[-1]
    assert turn.timings_ms["queue_wait_ms"] >= HELD_S * 1000 * 0.8
    assert queue.active == 0 and queue.max_active == 1
