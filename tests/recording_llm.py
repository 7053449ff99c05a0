"""A stand-in LLM for unit tests of one component: replies with fixed text and records the prompts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from providers.llm.base import LLM, ChatMessage, QueueListener, Sampling


class RecordingLLM(LLM):
    label = "recording"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls: list[list[ChatMessage]] = []
        self.samplings: list[Sampling] = []  # filled by subclasses that override stream_tokens

    def record(self, messages: list[ChatMessage], sampling: Sampling) -> None:
        self.calls.append(messages)
        self.samplings.append(sampling)

    def stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        on_queued: QueueListener | None = None,
    ) -> Iterator[str]:
        self.calls.append(messages)
        yield self.reply

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        self.calls.append(messages)
        return self.reply
