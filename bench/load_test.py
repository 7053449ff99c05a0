"""Several users asking at once: how the one embedded llama.cpp model serves them.

What it does: the starter dataset's documents (sample_docs/) are ingested once into a temporary
RAGCHAT_HOME, and one Session is built, as a Streamlit server builds one for all its sessions.
Its embedded model is loaded and warmed: every question of the run is asked twice by one user
first, so llama.cpp's prompt cache is the same for every round (the cold pass's time is printed).
Then, for each N in --users, N threads (simulated users, each its own client id) start together and
share out the same list of starter questions (max(--users) × --questions of them, so every round does
the same work), each asking its share one after the other through ``session.ask`` (the app's path:
guardrails, retrieval, queued generation, citation and support checks, memory pass).

Per round it prints: questions asked and answered, wall time, throughput (answers per minute),
latency p50 and p95 of the answers (question asked → checked answer), their queue wait p95 and max
(``timings_ms["queue_wait_ms"]``: time spent waiting for the model), errors (an answer with ``error``
set, e.g. the queue's "The model is busy…", or an exception), the generations run (answers and the
memory graph's decisions) and the share of the wall time the model was generating, and the most
generations that ever ran at once, counted at the llama.cpp call itself (a wrapper around the xllamacpp
server object, independent of the queue's own bookkeeping) and as the queue recorded it. The run
fails (exit 1) only if that count ever exceeds 1.

    .venv/bin/python bench/load_test.py --users 1 4 --questions 3         # the committed figures
    .venv/bin/python bench/load_test.py --users 6 --questions 1 --queue-limit 2   # a queue that overflows

Timings are wall-clock on whatever else the machine runs; the load average is printed with them.
Nothing listens on a network port: the users are threads calling the Python API.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.settings import PROJECT_ROOT, get_settings
from eval.dataset import load_dataset
from providers.llm.llamacpp import LlamaCppLLM
from rag.pipeline import AskOptions
from ragchat.application import open_session
from ragchat.session import Session

STARTER = PROJECT_ROOT / "eval" / "datasets" / "starter.jsonl"


class Asked(BaseModel):
    """One question of one simulated user."""

    user: int
    question: str
    latency_ms: float
    queue_wait_ms: float = 0.0
    error: str | None = None


class Round(BaseModel):
    """One round's figures; throughput, latency and queue wait count the answered questions."""

    users: int
    questions: int
    answered: int
    wall_s: float
    per_minute: float
    latency_p50_ms: float
    latency_p95_ms: float
    queue_wait_p95_ms: float
    queue_wait_max_ms: float
    errors: int
    error_messages: list[str]
    generations: int
    model_busy_share: float
    max_concurrent_generations: int
    queue_max_active: int
    load_average: float


class CountingServer:
    """Stands in front of the xllamacpp server object: counts generations (answers, and the memory
    graph's decisions), the most running at once, and the time the model was busy."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self._lock = threading.Lock()
        self.running = 0
        self.reset()

    @classmethod
    def install(cls, llm: LlamaCppLLM) -> CountingServer:
        """Put a counter in front of this model's server: every generation is counted at the call."""
        counter = cls(llm._server)
        llm._server = counter
        return counter

    def reset(self) -> None:
        self.most = 0
        self.calls = 0
        self.busy_s = 0.0

    def handle_chat_completions(self, *args: Any) -> Any:
        with self._lock:
            self.running += 1
            self.calls += 1
            self.most = max(self.most, self.running)
        began = time.perf_counter()
        try:
            return self._server.handle_chat_completions(*args)
        finally:
            with self._lock:
                self.running -= 1
                self.busy_s += time.perf_counter() - began

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]


def starter_questions() -> tuple[list[Path], list[str]]:
    """The starter set's documents and its single-turn questions that have a reference answer."""
    dataset = load_dataset(STARTER)
    questions = [q.question for q in dataset.questions if q.reference is not None and q.conversation is None]
    return dataset.documents, questions


def run_round(session: Session, counter: CountingServer, users: int, pool: list[str]) -> Round:
    """`users` threads share out `pool` (user i asks every users-th question, in order) and start together."""
    llm = session.app.llm()
    assert isinstance(llm, LlamaCppLLM)
    counter.reset()
    llm.queue.max_active = 0
    results: list[Asked] = []
    lock = threading.Lock()
    start = threading.Barrier(users)

    def user(index: int) -> None:
        start.wait()
        for question in pool[index::users]:
            began = time.perf_counter()
            try:
                answer = session.ask(question, AskOptions(client_id=f"user-{index}"))
                asked = Asked(
                    user=index,
                    question=question,
                    latency_ms=(time.perf_counter() - began) * 1000,
                    queue_wait_ms=answer.timings_ms.get("queue_wait_ms", 0.0),
                    error=answer.error,
                )
            except Exception as exc:  # a crash is a finding, not the end of the run
                asked = Asked(
                    user=index, question=question, latency_ms=(time.perf_counter() - began) * 1000, error=repr(exc)
                )
            with lock:
                results.append(asked)

    threads = [threading.Thread(target=user, args=(i,), name=f"user-{i}") for i in range(users)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    answered = [r for r in results if not r.error]
    latencies = [r.latency_ms for r in answered]
    waits = [r.queue_wait_ms for r in answered]
    errors = [r.error for r in results if r.error]
    return Round(
        users=users,
        questions=len(results),
        answered=len(answered),
        wall_s=round(wall, 1),
        per_minute=round(len(answered) / wall * 60, 2),
        latency_p50_ms=round(statistics.median(latencies), 0) if latencies else 0.0,
        latency_p95_ms=round(percentile(latencies, 0.95), 0),
        queue_wait_p95_ms=round(percentile(waits, 0.95), 0),
        queue_wait_max_ms=round(max(waits, default=0.0), 0),
        errors=len(errors),
        error_messages=sorted(set(errors)),
        generations=counter.calls,
        model_busy_share=round(counter.busy_s / wall, 2),
        max_concurrent_generations=counter.most,
        queue_max_active=llm.queue.max_active,
        load_average=round(os.getloadavg()[0], 1),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, nargs="+", default=[1, 4], help="simulated users per round")
    parser.add_argument(
        "--questions", type=int, default=3, help="questions per user in the largest round (every round asks the same)"
    )
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="packaged GGUF name or .gguf path")
    parser.add_argument("--max-tokens", type=int, default=None, help="answer length cap (default: the setting)")
    parser.add_argument("--queue-limit", type=int, default=None, help="RAGCHAT_LLM_QUEUE_LIMIT for this run")
    parser.add_argument("--queue-timeout", type=float, default=None, help="RAGCHAT_LLM_QUEUE_TIMEOUT_S for this run")
    args = parser.parse_args()

    documents, questions = starter_questions()
    with tempfile.TemporaryDirectory(prefix="ragchat-load-") as home:
        settings = get_settings(
            home=Path(home),
            llm_provider="llamacpp",
            llm_model=args.model,
            llm_max_tokens=args.max_tokens,
            llm_queue_limit=args.queue_limit,
            llm_queue_timeout_s=args.queue_timeout,
            rate_limit_per_minute=0,  # this measures the model, not the per-user guardrail
        )
        session = open_session(settings)
        failed = [r for r in session.ingest_paths(documents) if r.status != "indexed"]
        if failed:
            print(f"ingest failed: {failed}", file=sys.stderr)
            return 1
        llm = session.app.llm()
        if not isinstance(llm, LlamaCppLLM):
            print(f"the load test is about the embedded model, not {llm.label}", file=sys.stderr)
            return 1
        counter = CountingServer.install(llm)
        # Every round asks the same questions, so their figures compare: as many as the largest round's
        # users ask, --questions each. llama.cpp keeps earlier prompts in a RAM cache (cache_ram_mib),
        # and its hits grew over the first two passes (prompt tokens evaluated for 12 questions: 3468,
        # 1988, then 546 on every later pass), so two untimed passes come first: every round then
        # sees the same cache, and the first pass's time is the cold figure.
        pool = [questions[k % len(questions)] for k in range(max(args.users) * args.questions)]
        warm = session.ask(questions[0])
        passes = []
        for _ in range(2):
            began = time.perf_counter()
            for question in pool:
                session.ask(question)
            passes.append(time.perf_counter() - began)
        print(
            f"model: {llm.label}; queue limit {llm.queue.limit}, timeout {llm.queue.timeout_s:g} s; "
            f"warm-up answer in {warm.timings_ms['total_ms'] / 1000:.1f} s; one user asking the {len(pool)} "
            f"questions: {passes[0]:.1f} s cold, {passes[1]:.1f} s the second time; "
            f"{len(questions)} questions from {STARTER.name}",
            file=sys.stderr,
        )
        rounds = []
        for users in args.users:
            result = run_round(session, counter, users, pool)
            rounds.append(result)
            print(f"{users} users done in {result.wall_s} s", file=sys.stderr)

    print(
        "| users | asked | answered | wall s | answers/min | latency p50 s | latency p95 s | queue wait p95 s | "
        "queue wait max s | errors | generations | model busy | max generations at once | load avg |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rounds:
        print(
            f"| {r.users} | {r.questions} | {r.answered} | {r.wall_s} | {r.per_minute} | "
            f"{r.latency_p50_ms / 1000:.1f} | "
            f"{r.latency_p95_ms / 1000:.1f} | {r.queue_wait_p95_ms / 1000:.1f} | {r.queue_wait_max_ms / 1000:.1f} | "
            f"{r.errors} | {r.generations} | {r.model_busy_share:.0%} | {r.max_concurrent_generations} | "
            f"{r.load_average} |"
        )
    for r in rounds:
        for message in r.error_messages:
            print(f"{r.users} users, error: {message}")
    print(json.dumps([r.model_dump() for r in rounds]))
    overlapped = [r.users for r in rounds if r.max_concurrent_generations > 1 or r.queue_max_active > 1]
    if overlapped:
        print(f"two generations ran at once with {overlapped} users", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
