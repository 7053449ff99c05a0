"""Embedded llama.cpp through xllamacpp: the model runs in this process, no server needed."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener, Sampling, Token
from providers.llm.generation_queue import GenerationQueue

_DONE = object()


class LlamaCppLLM(LLM):
    """One llama.cpp instance generating one reply at a time (one slot, 2 cores): callers wait in a
    first-come, first-served GenerationQueue and hear their place in it."""

    constrains = True
    gives_logprobs = True
    continues = True  # llama.cpp's server prefills a final assistant message (CommonParams.prefill_assistant)

    def __init__(
        self,
        model_path: Path,
        label: str,
        n_ctx: int = 4096,
        threads: int = 2,
        queue_limit: int = 8,
        queue_timeout_s: float = 300.0,
        cache_ram_mib: int = 128,
    ) -> None:
        """`cache_ram_mib` bounds llama.cpp's RAM cache of earlier prompts' states (restored when a new
        prompt shares their prefix: the answer and memory prompts alternate). Unbounded by us, it grew
        by each distinct prompt's KV cache (~12 KiB a token on the 0.5B) up to llama.cpp's 8 GiB."""
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        params.cache_ram_mib = cache_ram_mib
        self._server = xllamacpp.Server(params)
        self.queue = GenerationQueue(limit=queue_limit, timeout_s=queue_timeout_s)
        self.label = label
        self.model_path = model_path
        # xllamacpp also serves OpenAI's HTTP API for the loaded model on this 127.0.0.1 address.
        self.listening_address: str = self._server.listening_address
        # llama.cpp's own figures for the latest generation (prompt_n, cache_n, prompt_ms, predicted_n, …).
        self.last_timings: dict[str, float] = {}

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        request = {
            "messages": [m.model_dump() for m in messages],
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "cache_prompt": True,  # the fixed system prompt (the memory model's examples) is processed once
            "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
        }
        slot = self.queue.acquire()
        try:
            reply = self._server.handle_chat_completions(request)
        except Exception as exc:
            raise LLMError(f"llama.cpp failed: {exc}") from exc
        finally:
            slot.release()
        if not isinstance(reply, dict) or "error" in reply or not reply.get("choices"):
            raise LLMError(f"llama.cpp gave no JSON reply: {str(reply)[:300]}")
        return str(reply["choices"][0]["message"].get("content") or "")

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        request: dict[str, Any] = {
            "messages": [m.model_dump() for m in messages],
            "stream": True,
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            # Reuse the KV cache of the longest common prefix with the previous prompt: the fixed
            # system prompt is processed once, not on every question.
            "cache_prompt": True,
        }
        if sampling.grammar:
            request["grammar"] = sampling.grammar
        if sampling.top_logprobs:
            request["logprobs"] = True
            request["top_logprobs"] = sampling.top_logprobs
        # Waits here, in the consumer's thread (its listener may update a page), on its first next().
        slot = self.queue.acquire(on_queued)
        tokens: queue.Queue[Any] = queue.Queue()
        cancelled = threading.Event()
        timings: dict[str, float] = {}

        def on_chunk(chunk: dict[str, Any]) -> bool:
            if isinstance(chunk.get("timings"), dict):
                timings.update(chunk["timings"])
            if "error" in chunk:
                tokens.put(LLMError(str(chunk["error"])))
            for choice in chunk.get("choices", []):
                text = (choice.get("delta") or {}).get("content")
                if text:
                    tokens.put(_token(text, choice))
            return cancelled.is_set()

        def run() -> None:
            try:
                self._server.handle_chat_completions(request, on_chunk)
            except Exception as exc:  # surfaced to the consumer below
                tokens.put(LLMError(f"llama.cpp failed: {exc}"))
            finally:
                # Generation over: finished, failed, or cancelled because the consumer stopped reading.
                slot.release()
                tokens.put(_DONE)

        worker = threading.Thread(target=run, name="llamacpp-generate", daemon=True)
        try:
            worker.start()
        except BaseException:
            slot.release()
            raise
        try:
            while (item := tokens.get()) is not _DONE:
                if isinstance(item, Exception):
                    raise item
                yield item
            # Set by the consumer's thread as the reply ends, so that a queued generation starting
            # meanwhile cannot blank them before the caller reads them.
            self.last_timings = timings
        finally:
            # The consumer is done, or stopped reading (closed the stream, a Streamlit rerun): a
            # True from on_chunk makes llama.cpp stop at its next token, and the worker frees the slot.
            # Waiting for that keeps a process that exits right after (the CLI, having refused at the
            # phrase line) from ending while llama.cpp still runs, which aborts it.
            cancelled.set()
            worker.join(timeout=60)


def _token(text: str, choice: dict[str, Any]) -> Token:
    """A streamed piece with the log-probabilities llama.cpp gave for its first token, if asked."""
    content = (choice.get("logprobs") or {}).get("content") or []
    if not content:
        return Token(text=text)
    first = content[0]
    return Token(
        text=text,
        logprob=float(first["logprob"]),
        alternatives={str(t["token"]): float(t["logprob"]) for t in first.get("top_logprobs", [])},
    )
