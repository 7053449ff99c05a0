"""Ollama through the official `ollama` client (OLLAMA_HOST)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests

from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener, Sampling, Token

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
    structured = True  # `format`: a JSON schema Ollama constrains decoding to

    def __init__(self, host: str, model: str) -> None:
        import ollama

        self._client = ollama.Client(host=host)
        self._model = model
        self._host = host
        self.label = f"ollama · {model} @ {host}"

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        """Ollama's NDJSON stream; its last part says `done`. A stream that breaks off before it (the
        server died, its model runner crashed and sent an error line) raises LLMError after the text
        so far, which the answer path keeps and marks incomplete. With
        `sampling.json_schema`, the reply is JSON matching it."""
        del on_queued  # Ollama queues concurrent requests itself, on the server
        parts = 0
        done = False
        with self._errors_as_llm_error(lambda: parts):
            for part in self._client.chat(
                model=self._model,
                messages=[m.model_dump() for m in messages],
                stream=True,
                format=sampling.json_schema,
                options={"temperature": sampling.temperature, "num_predict": sampling.max_tokens},
            ):
                parts += 1
                done = bool(part.done)
                if text := part.message.content:
                    yield Token(text=text)
        if not done:
            raise LLMError(
                f"Ollama at {self._host} stopped mid-reply: its stream ended after {parts} reply parts "
                "without the final one."
            )

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
    def _errors_as_llm_error(self, parts_received: Callable[[], int] = lambda: 0) -> Iterator[None]:
        """Client errors as LLMError; `parts_received` tells a broken stream from a server never reached."""
        import httpx
        import ollama

        try:
            yield
        except (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError) as exc:  # the client's transport is httpx
            raise LLMError(f"Ollama at {self._host} is not reachable: {exc}") from exc
        except (httpx.TransportError, OSError) as exc:  # it answered, then the connection broke or stalled
            parts = parts_received()
            after = f" after {parts} reply parts" if parts else ""
            raise LLMError(f"Ollama at {self._host} broke off the connection{after}: {exc}") from exc
        except ollama.ResponseError as exc:
            if parts := parts_received():
                raise LLMError(
                    f"Ollama ({self._model}) stopped mid-reply after {parts} reply parts: {exc.error}"
                ) from exc
            raise LLMError(f"Ollama ({self._model}) failed: {exc}") from exc
        except ValueError as exc:  # a reply that is not the JSON the client expects (a proxy, an old server)
            raise LLMError(f"Ollama at {self._host} sent a reply that could not be read: {exc}") from exc
