"""Which models run: the answering model's choice, options and status, and what an answer records."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ModelInfo(BaseModel):
    llm: str
    embedder: str
    reranker: str
    vector_store: str = Field(default="", description="Which Chroma ran: embedded (its path) or a server (its URL).")
    llm_fallback: str = Field(
        default="",
        description="When the configured model is not installed: which one answers instead, and how to install it.",
    )


LLMProvider = Literal["llamacpp", "ollama", "openai"]


LLMState = Literal["not loaded", "loading", "ready", "failed"]


class LLMChoice(BaseModel):
    """The provider and model that answer; `note` says why, when `auto` picked it; `fallback` says that the
    configured packaged model is not installed, which one answers instead, and how to install it."""

    provider: LLMProvider
    model: str = Field(description="llamacpp: a packaged name or a .gguf path; ollama: a tag; openai: the served name.")
    note: str = ""
    fallback: str = ""

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.model}"


class LLMOption(BaseModel):
    """A model the app offers to switch to (App.llm_options)."""

    provider: LLMProvider
    model: str
    label: str
    available: bool = True
    hint: str = Field(default="", description="When not available: why, and how to make it so.")

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.model}"


class LLMStatus(BaseModel):
    """Where the answering model stands: the app's model status line."""

    state: LLMState
    label: str = Field(description="The loaded model's label, else the chosen provider and model.")
    key: str = Field(default="", description="LLMChoice.key of the chosen model; empty when it cannot be resolved.")
    error: str | None = None
    fallback: str = Field(default="", description="LLMChoice.fallback: the configured model is not installed.")
