"""Each LLM provider streams for real: llama.cpp in-process, OpenAI-compatible HTTP against
xllamacpp's own server, and the Ollama client against a 127.0.0.1 server speaking Ollama's NDJSON."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import get_settings
from providers.llm.base import ChatMessage, LLMError
from providers.llm.factory import build_llm, resolve_gguf
from providers.llm.llamacpp import LlamaCppLLM
from providers.llm.ollama_provider import OllamaLLM
from providers.llm.openai_compat import OpenAICompatLLM
from tests.conftest import TEST_LLM
from tests.ollama_fake import REPLY_WORDS, FakeOllama

PROMPT = [ChatMessage(role="user", content="Reply with the single word: ready")]


@pytest.fixture(scope="module")
def llamacpp() -> LlamaCppLLM:
    path, label = resolve_gguf(TEST_LLM, get_settings().model_dir)
    return LlamaCppLLM(path, label)


def test_llamacpp_streams_several_pieces(llamacpp: LlamaCppLLM) -> None:
    pieces = list(llamacpp.stream(PROMPT, max_tokens=16, temperature=0.0))
    assert len(pieces) >= 1
    assert "ready" in "".join(pieces).lower()


def test_openai_compatible_server(llamacpp: LlamaCppLLM) -> None:
    base = f"{llamacpp.listening_address}/v1"
    llm = OpenAICompatLLM(base, model=TEST_LLM)
    assert "ready" in llm.complete(PROMPT, max_tokens=16, temperature=0.0).lower()
    with pytest.raises(LLMError):
        list(OpenAICompatLLM("http://127.0.0.1:9/v1", model="x", timeout_s=2).stream(PROMPT, 8, 0.0))


@pytest.fixture
def ollama_server() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def test_ollama_client_streams_and_auto_prefers_a_serving_ollama(
    ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OLLAMA_HOST", ollama_server.host)
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "auto")
    monkeypatch.delenv("RAGCHAT_LLM_MODEL", raising=False)
    llm = build_llm(get_settings())
    assert isinstance(llm, OllamaLLM) and "llama3.2" in llm.label
    assert list(llm.stream(PROMPT, max_tokens=8, temperature=0.0)) == REPLY_WORDS
    request = ollama_server.requests[0]
    assert request["options"] == {"temperature": 0.0, "num_predict": 8}


def test_auto_without_ollama_uses_the_embedded_model_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "auto")
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", TEST_LLM)
    llm = build_llm(get_settings())
    assert isinstance(llm, LlamaCppLLM)
    assert "no Ollama serving" in llm.label and TEST_LLM in llm.label


def test_unknown_model_name_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "llamacpp")
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", "no-such-model")
    with pytest.raises(LLMError, match="neither a packaged model"):
        build_llm(get_settings())


def test_llamacpp_keeps_its_own_timings_of_the_last_generation(llamacpp: LlamaCppLLM) -> None:
    list(llamacpp.stream(PROMPT, max_tokens=8, temperature=0.0))
    assert llamacpp.last_timings["predicted_n"] >= 1
    assert llamacpp.last_timings["prompt_n"] + llamacpp.last_timings.get("cache_n", 0) > 5
