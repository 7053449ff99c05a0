"""Which model the settings select (no model is loaded here), what Ollama lists, whether a packaged
model is installed, and the per-question top k reaching retrieval."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.schemas import Retrieval
from core.settings import get_settings
from providers.llm.base import LLMError
from providers.llm.factory import resolve_llm
from providers.llm.ollama_provider import ollama_models
from providers.packaged_models import (
    DEFAULT_APP_GGUF,
    PACKAGED_GGUFS,
    ModelNotInstalled,
    best_installed_gguf,
    gguf_installed,
)
from rag.messages import REFUSAL_TEXT
from rag.pipeline import AskOptions
from tests.ollama_fake import FakeOllama
from tests.pipeline_parts import build_pipeline

CLOSED = "http://127.0.0.1:9"  # nothing listens on the discard port


def test_explicit_providers_are_taken_as_given(tmp_path: Path) -> None:
    choice = resolve_llm(get_settings(llm_provider="llamacpp", llm_model="qwen2.5-coder-0.5b"))
    assert (choice.provider, choice.model, choice.note, choice.fallback) == ("llamacpp", "qwen2.5-coder-0.5b", "", "")
    (tmp_path / PACKAGED_GGUFS[DEFAULT_APP_GGUF].filename).write_bytes(b"")  # assembled: installed
    default = resolve_llm(get_settings(llm_provider="llamacpp", llm_model=None, model_dir=tmp_path))
    assert (default.model, default.fallback) == (DEFAULT_APP_GGUF, "")
    assert resolve_llm(get_settings(llm_provider="ollama", ollama_host=CLOSED)).key == "ollama:llama3.2"
    assert resolve_llm(get_settings(llm_provider="openai", llm_model="served")).key == "openai:served"
    with pytest.raises(LLMError, match="must name the served model"):
        resolve_llm(get_settings(llm_provider="openai", llm_model=None))


def test_auto_takes_ollama_only_when_it_serves_the_model(tmp_path: Path) -> None:
    (tmp_path / PACKAGED_GGUFS[DEFAULT_APP_GGUF].filename).write_bytes(b"")
    fallback = resolve_llm(get_settings(llm_provider="auto", llm_model=None, ollama_host=CLOSED, model_dir=tmp_path))
    assert fallback.key == f"llamacpp:{DEFAULT_APP_GGUF}"
    assert fallback.note == f"auto: no Ollama serving llama3.2 at {CLOSED}"
    with FakeOllama(models=("llama3.2:latest", "qwen2.5:7b")) as ollama:
        assert ollama_models(ollama.host) == ["llama3.2:latest", "qwen2.5:7b"]
        served = resolve_llm(get_settings(llm_provider="auto", llm_model=None, ollama_host=ollama.host))
        assert served.key == "ollama:llama3.2" and served.note == ""
        # An Ollama tag it does not serve: the embedded default, not a tag llama.cpp cannot load.
        other = resolve_llm(
            get_settings(llm_provider="auto", llm_model="mistral", ollama_host=ollama.host, model_dir=tmp_path)
        )
        assert other.key == f"llamacpp:{DEFAULT_APP_GGUF}"
    assert ollama_models(CLOSED) == []


def test_a_packaged_model_is_installed_when_assembled_or_its_parts_are_there(tmp_path: Path) -> None:
    # Nothing is assembled in tmp_path: the 0.5B counts because `make models` installed its part packages.
    assert gguf_installed("qwen2.5-coder-0.5b", tmp_path)
    big = PACKAGED_GGUFS["qwen2.5-coder-1.5b"]
    (tmp_path / big.filename).write_bytes(b"")  # an assembled file counts whatever packages are installed
    assert gguf_installed(big.name, tmp_path)


def hide_parts(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The part packages of a packaged model look uninstalled (as on a machine without them)."""
    spec = PACKAGED_GGUFS[name]
    for i in range(1, spec.parts + 1):
        monkeypatch.setitem(sys.modules, f"{spec.module_prefix}{i}", None)


def test_a_missing_packaged_model_gives_way_to_the_best_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_parts("qwen2.5-coder-1.5b", monkeypatch)
    assert best_installed_gguf(tmp_path) == "qwen2.5-coder-0.5b"  # its part packages: `make models`
    for provider in ("auto", "llamacpp"):
        choice = resolve_llm(
            get_settings(llm_provider=provider, llm_model=None, ollama_host=CLOSED, model_dir=tmp_path)
        )
        assert choice.model == "qwen2.5-coder-0.5b"
        assert choice.fallback == (
            "qwen2.5-coder-1.5b is not installed, so qwen2.5-coder-0.5b answers; "
            "run `make models-app` to install qwen2.5-coder-1.5b."
        )
    # A .gguf path is taken as given (its absence is an error when it loads, not a silent swap).
    path = str(tmp_path / "mine.gguf")
    assert resolve_llm(get_settings(llm_provider="llamacpp", llm_model=path, model_dir=tmp_path)).fallback == ""
    hide_parts("qwen2.5-coder-0.5b", monkeypatch)
    assert best_installed_gguf(tmp_path) is None
    with pytest.raises(ModelNotInstalled, match=r"No packaged language model is installed.*`make models-app`"):
        resolve_llm(get_settings(llm_provider="llamacpp", llm_model=None, model_dir=tmp_path))


class _RecordingRetriever:
    """Returns nothing (so no model is asked) and keeps the k it was asked for."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def languages(self, doc_ids: object = None) -> dict[str, int]:
        return {}

    def search(
        self,
        query: str,
        k: int,
        bm25_weight: float,
        rerank: bool,
        query_lang: str | None = None,
        doc_ids: frozenset[str] | None = None,
    ) -> Retrieval:
        self.asked.append(k)
        return Retrieval(query=query, hits=[], candidates=[], bm25_weight=bm25_weight, fusion="convex", reranker="none")


def test_top_k_per_question_reaches_retrieval(tmp_path: Path) -> None:
    settings = get_settings(home=tmp_path, top_k=4)
    retriever = _RecordingRetriever()

    def no_llm() -> None:
        raise AssertionError("no model is needed when nothing was retrieved")

    pipeline = build_pipeline(settings, retriever, no_llm)  # type: ignore[arg-type]
    assert pipeline.ask("What was the Q2 revenue?", AskOptions(top_k=2)).result().answer == REFUSAL_TEXT
    pipeline.ask("What was the Q2 revenue?").result()
    assert retriever.asked == [2, 4]
