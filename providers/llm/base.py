"""The LLM port: every provider streams text tokens for a list of chat messages."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterator
from typing import Any, Literal

from pydantic import BaseModel


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Sampling(BaseModel):
    """How one reply is generated. `grammar` (GBNF), `json_schema` and `top_logprobs` are honoured
    by providers that can (`LLM.constrains`, `LLM.structured`, `LLM.gives_logprobs`); others ignore
    them."""

    max_tokens: int
    temperature: float
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    top_logprobs: int = 0


class Token(BaseModel):
    """A piece of the reply and, when they were asked for and the provider gives them, the natural
    log-probability the model gave it and the most likely tokens at its position (token text →
    log-probability), both before any grammar narrowed the choice."""

    text: str
    logprob: float | None = None
    alternatives: dict[str, float] = {}


class LLMError(RuntimeError):
    """The model could not answer (server down, model missing); the message says why."""


QueueListener = Callable[[int], None]
"""Hears how many generations are ahead of a call waiting for the model, then 0 when its turn comes."""


class LLM(ABC):
    """A chat model. `label` is what the UI and `ask --json` report as the model that ran."""

    label: str
    constrains: bool = False  # honours Sampling.grammar: the reply always matches it
    structured: bool = False  # honours Sampling.json_schema: the reply is JSON matching it
    gives_logprobs: bool = False  # fills Token.alternatives when Sampling.top_logprobs > 0
    continues: bool = False  # a last assistant message is the reply's start, which the model continues

    def stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        on_queued: QueueListener | None = None,
    ) -> Generator[str, None, None]:
        """Yield the reply's text as it is generated. A provider that queues its callers (the
        embedded model: one generation at a time) tells `on_queued` the caller's place while it
        waits; a server-backed provider queues on the server and never calls it. A provider
        overrides this or `stream_tokens`; closing the generator stops the generation."""
        sampling = Sampling(max_tokens=max_tokens, temperature=temperature)
        for token in self.stream_tokens(messages, sampling, on_queued):
            yield token.text

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        """Like `stream`, honouring what this provider can of `sampling` (see `constrains`,
        `structured`, `gives_logprobs`)."""
        for text in self.stream(messages, sampling.max_tokens, sampling.temperature, on_queued):
            yield Token(text=text)

    def first_token(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Token | None:
        """The reply's first token (None: the reply was empty), the generation stopped after it: a
        one-token judgment, or a prompt read so that its state is cached. Raises LLMError."""
        tokens = self.stream_tokens(messages, sampling, on_queued)
        try:
            return next(iter(tokens), None)
        finally:
            close = getattr(tokens, "close", None)
            if close is not None:
                close()

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
