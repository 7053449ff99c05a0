"""The LLM port: every provider streams text tokens for a list of chat messages."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class LLMError(RuntimeError):
    """The model could not answer (server down, model missing); the message says why."""


class LLM(ABC):
    """A chat model. `label` is what the UI and `ask --json` report as the model that ran."""

    label: str

    @abstractmethod
    def stream(self, messages: list[ChatMessage], max_tokens: int, temperature: float) -> Iterator[str]:
        """Yield the reply's text as it is generated."""

    def complete(self, messages: list[ChatMessage], max_tokens: int, temperature: float) -> str:
        return "".join(self.stream(messages, max_tokens, temperature))

    @abstractmethod
    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        """A reply constrained to JSON matching `schema` (grammar-constrained decoding where the
        backend has it), at temperature 0. The caller still validates it."""
