"""Choosing the answering model: App's status, options and switch with the real 0.5B model, and
the app's settings panel switching to a model an Ollama server on 127.0.0.1 lists."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.schemas import LLMChoice
from core.settings import PROJECT_ROOT, get_settings
from providers.llm.base import ChatMessage, LLMError
from ragchat.application import open_session
from ragchat.process_models import ProcessModels
from tests.conftest import TEST_LLM
from tests.e2e.test_app import wait_for_ingest
from tests.ollama_fake import REPLY_WORDS, FakeOllama

APP = PROJECT_ROOT / "app.py"
TIMEOUT_S = 240
PROMPT = [ChatMessage(role="user", content="Reply with the single word: ready")]
NOTES = b"# Forklifts\n\nForklift certification takes two days and is renewed every three years.\n"


def test_status_options_and_a_switch_that_fails_or_succeeds(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # no Ollama: only packaged models are offered
    session = open_session(get_settings())
    status = session.app.llm_status()
    assert (status.state, status.key) == ("not loaded", f"llamacpp:{TEST_LLM}")

    session.app.llm()
    status = session.app.llm_status()
    assert status.state == "ready" and TEST_LLM in status.label
    options = {o.key: o for o in session.app.llm_options()}
    assert options[f"llamacpp:{TEST_LLM}"].available
    assert all(o.provider == "llamacpp" for o in options.values())
    assert all(o.available or o.hint.startswith("not installed: run `make models") for o in options.values())

    # A model that cannot load: the error says why, and the current model keeps answering.
    with pytest.raises(LLMError, match="neither a packaged model"):
        session.app.use_llm(LLMChoice(provider="llamacpp", model=str(home / "missing.gguf")))
    assert session.app.llm_status().key == f"llamacpp:{TEST_LLM}" and session.app.llm_status().state == "ready"

    # The same weights as a local .gguf file: a real second load, which then answers.
    path = session.app.llm().model_path  # type: ignore[attr-defined]
    llm = session.app.use_llm(LLMChoice(provider="llamacpp", model=str(path)))
    assert session.app.llm() is llm
    assert session.models().llm == f"llama.cpp · {path.name}"
    assert session.app.llm_status().key == f"llamacpp:{path}"
    assert f"llamacpp:{path}" in {o.key for o in session.app.llm_options()}  # the model in use is always offered
    assert "ready" in llm.complete(PROMPT, max_tokens=8, temperature=0.0).lower()


def test_a_model_that_cannot_load_is_reported_as_failed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", str(home / "missing.gguf"))
    session = open_session(get_settings())
    with pytest.raises(LLMError):
        session.app.llm()
    status = session.app.llm_status()
    assert status.state == "failed" and "neither a packaged model" in (status.error or "")


def test_the_settings_panel_switches_to_a_model_ollama_serves(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama(models=("llama3.2:latest",)) as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.host)
        st.cache_resource.clear()  # no Session left over from a test with another home
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
        assert not at.exception
        choice = at.sidebar.selectbox(key="llm_choice")
        assert choice.value == f"llamacpp:{TEST_LLM}"
        assert "llama3.2:latest · Ollama" in choice.options

        choice.set_value("ollama:llama3.2:latest").run()
        assert not at.exception and not at.warning, [w.value for w in at.warning]
        status = "\n".join(m.value for m in at.sidebar.markdown)
        assert f"ollama · llama3.2:latest @ {ollama.host}" in status
        assert at.sidebar.selectbox(key="llm_choice").value == "ollama:llama3.2:latest"

        # The next answer comes from the Ollama server.
        at.sidebar.file_uploader[0].set_value(("notes.md", NOTES, "text/markdown"))
        at.run()
        next(b for b in at.sidebar.button if b.label == "Index files").click().run()
        wait_for_ingest(at)
        at.chat_input[0].set_value("How long does forklift certification take?").run()
        assert not at.exception
        answer = [m for m in at.chat_message if m.name == "assistant"][-1]
        assert "".join(REPLY_WORDS) in "\n".join(m.value for m in answer.markdown)
        assert "model: ollama · llama3.2:latest" in "\n".join(c.value for c in answer.caption)
        assert ollama.requests and ollama.requests[-1]["model"] == "llama3.2:latest"


def test_a_model_that_cannot_load_shows_as_calm_notices_in_the_app(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", str(home / "missing.gguf"))
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    at.sidebar.file_uploader[0].set_value(("notes.md", NOTES, "text/markdown"))
    at.run()
    next(b for b in at.sidebar.button if b.label == "Index files").click().run()
    wait_for_ingest(at)
    at.chat_input[0].set_value("How long does forklift certification take?").run()

    assert not at.exception
    answer = [m for m in at.chat_message if m.name == "assistant"][-1]
    assert any("neither a packaged model" in w.value for w in answer.warning)
    # The status line says the model is not available, and why.
    assert any(m.value.startswith(":red-badge[") and "Not available" in m.value for m in at.sidebar.markdown)
    assert any("The model could not be loaded" in c.value for c in at.sidebar.caption)


def test_a_lost_select_box_state_does_not_switch_the_model(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamlit drops a widget's state after a run that did not draw it; the box then falls back to
    its first option (the packaged model here). That must not load it for everyone: only the
    person's own change switches the model (the chat browser test once found the 1.5B loaded). The
    other settings are kept too: app.py keeps them through a run that does not draw them."""
    with FakeOllama(models=("llama3.2:latest",)) as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.host)
        monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "ollama")
        monkeypatch.setenv("RAGCHAT_LLM_MODEL", "llama3.2:latest")
        st.cache_resource.clear()
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
        choice = at.sidebar.selectbox(key="llm_choice")
        assert choice.value == "ollama:llama3.2:latest"
        assert choice.options[0] != "ollama:llama3.2:latest"  # the fallback would be another model
        at.sidebar.slider(key="top_k").set_value(2).run()

        # One run that cannot draw the box (listing the models fails once): Streamlit drops its state.
        real_options = ProcessModels.llm_options
        with monkeypatch.context() as failing:
            failing.setattr(ProcessModels, "llm_options", lambda self: (_ for _ in ()).throw(OSError("busy")))
            at.run()
        assert ProcessModels.llm_options is real_options and not at.sidebar.selectbox
        at.run()
        assert not at.exception
        assert at.sidebar.selectbox(key="llm_choice").value == "ollama:llama3.2:latest"
        status = "\n".join(m.value for m in at.sidebar.markdown)
        assert f"ollama · llama3.2:latest @ {ollama.host}" in status
        assert at.sidebar.slider(key="top_k").value == 2  # the person's other settings are kept too
