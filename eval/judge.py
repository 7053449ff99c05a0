"""Our ports wrapped for ragas: an LLM port as ragas's structured-output judge, the embedder as its
embeddings. With these, ragas needs no OpenAI key and no network.

ragas 0.4's LLM-judged metrics (`ragas.metrics.collections`) talk to an `InstructorBaseRagasLLM`:
`generate(prompt, response_model)` must return an instance of the pydantic model. The prompt already
carries the JSON schema and examples; we send it as one user message, read the reply within a time
limit and parse the first JSON object in it. Small local models often reply with something that is not
that JSON, or with an empty list of statements; that raises `JudgeError` (or ragas returns NaN), and
the scorer reports the metric as "n/a (why)" for that question instead of failing the run.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from contextlib import closing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from ragas.embeddings.base import BaseRagasEmbedding
from ragas.llms.base import InstructorBaseRagasLLM

from providers.embedder import Embedder
from providers.llm.base import LLM, ChatMessage

Model = TypeVar("Model", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class JudgeError(RuntimeError):
    """The judge did not give a usable verdict; the message says why (shown as 'n/a (why)')."""


class PortJudge(InstructorBaseRagasLLM):
    """ragas's judge interface over one of our LLM ports (llama.cpp, Ollama, OpenAI-compatible)."""

    def __init__(self, llm: LLM, timeout_s: float, max_tokens: int) -> None:
        self.llm = llm
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens

    def generate(self, prompt: str, response_model: type[Model]) -> Model:
        deadline = time.monotonic() + self.timeout_s
        parts: list[str] = []
        # Closing the stream cancels the generation (llama.cpp stops at its next token).
        with closing(iter(self.llm.stream([ChatMessage(role="user", content=prompt)], self.max_tokens, 0.0))) as tokens:
            for token in tokens:
                parts.append(token)
                if time.monotonic() > deadline:
                    raise JudgeError(f"judge timed out after {self.timeout_s:g} s")
        return parse_reply("".join(parts), response_model)

    async def agenerate(self, prompt: str, response_model: type[Model]) -> Model:
        return await asyncio.to_thread(self.generate, prompt, response_model)


def parse_reply(reply: str, response_model: type[Model]) -> Model:
    """The first JSON object in the reply (code fences allowed), validated against the model."""
    text = _FENCE.sub("", reply.strip())
    start = text.find("{")
    if start < 0:
        raise JudgeError(f"judge reply has no JSON object for {response_model.__name__}: {_short(reply)}")
    try:
        payload, _ = json.JSONDecoder().raw_decode(text[start:])
        return response_model.model_validate(payload)
    except (json.JSONDecodeError, ValidationError) as exc:
        raise JudgeError(f"judge reply is not valid {response_model.__name__} JSON: {_short(reply)}") from exc


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


class EmbedderForRagas(BaseRagasEmbedding):
    """ragas's embeddings interface over our fastembed embedder (semantic similarity, answer relevancy)."""

    def __init__(self, embedder: Embedder) -> None:
        super().__init__()
        self.embedder = embedder

    def embed_text(self, text: str, **kwargs: Any) -> list[float]:
        return self.embedder.embed_query(text)

    async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
        return self.embed_text(text)

    def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return self.embedder.embed(list(texts))

    async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return self.embed_texts(texts)
