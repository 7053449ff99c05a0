"""The LLM port: every provider streams text tokens for a list of chat messages."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import Any, Literal

from pydantic import BaseModel


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class LLMError(RuntimeError):
    """The model could not answer (server down, model missing); the message says why."""


QueueListener = Callable[[int], None]
"""Hears how many generations are ahead of a call waiting for the model, then 0 when its turn comes."""


class LLM(ABC):
    """A chat model. `label` is what the UI and `ask --json` report as the model that ran."""

    label: str

    @abstractmethod
    def stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        on_queued: QueueListener | None = None,
    ) -> Iterator[str]:
        """Yield the reply's text as it is generated. A provider that queues its callers (the
        embedded model: one generation at a time) tells `on_queued` the caller's place while it
        waits; a server-backed provider queues on the server and never calls it."""

    def complete(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        on_queued: QueueListener | None = None,
    ) -> str:
        return "".join(self.stream(messages, max_tokens, temperature, on_queued))

    @abstractmethod
    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        """A reply constrained to JSON matching `schema` (grammar-constrained decoding where the
        backend has it), at temperature 0. The caller still validates it."""
