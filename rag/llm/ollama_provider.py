"""Ollama through the official `ollama` client (OLLAMA_HOST)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests

from rag.llm.base import LLM, ChatMessage, LLMError

DEFAULT_OLLAMA_MODEL = "llama3.2"


def ollama_models(host: str, timeout_s: float = 0.5) -> list[str]:
    """The model tags an Ollama server at `host` lists; empty when none answers."""
    try:
        response = requests.get(f"{host.rstrip('/')}/api/tags", timeout=timeout_s)
        response.raise_for_status()
        return [str(m["name"]) for m in response.json().get("models", []) if m.get("name")]
    except (requests.RequestException, ValueError, TypeError, AttributeError):
        return []


def ollama_has_model(host: str, model: str, timeout_s: float = 0.5) -> bool:
    """True when an Ollama server answers at `host` and lists `model` (tag optional)."""
    names = set(ollama_models(host, timeout_s))
    wanted = model if ":" in model else f"{model}:latest"
    return wanted in names or model in names


class OllamaLLM(LLM):
    def __init__(self, host: str, model: str) -> None:
        import ollama

        self._client = ollama.Client(host=host)
        self._model = model
        self._host = host
        self.label = f"ollama · {model} @ {host}"

    def stream(self, messages: list[ChatMessage], max_tokens: int, temperature: float) -> Iterator[str]:
        with self._errors_as_llm_error():
            for part in self._client.chat(
                model=self._model,
                messages=[m.model_dump() for m in messages],
                stream=True,
                options={"temperature": temperature, "num_predict": max_tokens},
            ):
                if text := part.message.content:
                    yield text

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        with self._errors_as_llm_error():
            reply = self._client.chat(
                model=self._model,
                messages=[m.model_dump() for m in messages],
                format=schema,  # Ollama constrains decoding to this JSON schema
                options={"temperature": 0.0, "num_predict": max_tokens},
            )
        return reply.message.content or ""

    @contextmanager
    def _errors_as_llm_error(self) -> Iterator[None]:
        import httpx
        import ollama

        try:
            yield
        except (httpx.TransportError, ConnectionError, OSError) as exc:  # the client's transport is httpx
            raise LLMError(f"Ollama at {self._host} is not reachable: {exc}") from exc
        except ollama.ResponseError as exc:
            raise LLMError(f"Ollama ({self._model}) failed: {exc}") from exc
