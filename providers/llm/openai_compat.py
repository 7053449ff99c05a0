"""Any OpenAI-compatible chat server (vLLM, llama.cpp's llama-server, LM Studio) over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import requests

from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener, Sampling, Token


class OpenAICompatLLM(LLM):
    structured = True  # response_format json_schema

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 120.0) -> None:
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout_s
        self.label = f"openai-compatible · {model} @ {base_url}"

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [m.model_dump() for m in messages],
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
        }
        try:
            response = requests.post(self._url, json=body, headers=self._headers, timeout=self._timeout)
            if response.status_code != 200:
                raise LLMError(f"{self.label} answered HTTP {response.status_code}: {response.text[:300]}")
            return str(response.json()["choices"][0]["message"].get("content") or "")
        except (requests.RequestException, ValueError, KeyError, IndexError) as exc:
            raise LLMError(f"{self.label} failed: {exc}") from exc

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        """Server-sent events ending in `data: [DONE]`. A stream that breaks off before it (the server
        died, a proxy cut it) raises LLMError after the text so far, which the answer path keeps and
        marks incomplete. With `sampling.json_schema`, the reply is JSON matching it."""
        del on_queued  # the server queues concurrent requests itself
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [m.model_dump() for m in messages],
            "stream": True,
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
        }
        if sampling.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": sampling.json_schema},
            }
        events = 0
        try:
            with requests.post(
                self._url, json=body, headers=self._headers, stream=True, timeout=self._timeout
            ) as response:
                if response.status_code != 200:
                    raise LLMError(f"{self.label} answered HTTP {response.status_code}: {response.text[:300]}")
                # Bytes, decoded here: server-sent events are UTF-8, but requests decodes a text/event-stream
                # without a charset (llama.cpp's server, Ollama) as Latin-1, and yields bytes without a
                # Content-Type at all.
                for raw in response.iter_lines():
                    line = raw.decode("utf-8")
                    if not line or not line.startswith("data:"):
                        continue
                    payload = line[len("data:") :].strip()
                    if payload == "[DONE]":
                        return
                    events += 1
                    for choice in json.loads(payload).get("choices", []):
                        if text := (choice.get("delta") or {}).get("content"):
                            yield Token(text=text)
        except (requests.RequestException, ValueError) as exc:  # ValueError: a cut-off event's JSON
            if events:
                raise LLMError(f"{self.label} broke off its reply after {events} events: {exc}") from exc
            raise LLMError(f"{self.label} failed: {exc}") from exc
        raise LLMError(f"{self.label} stopped mid-reply: its stream ended after {events} events without [DONE].")
