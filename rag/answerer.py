"""Ask: guardrails → rewrite a follow-up → retrieve → refuse without the LLM when nothing is relevant →
stream a grounded answer → validate its citations → check each sentence's support → store the turn
(masked) and log it (masked).

The guardrails (length, prompt injection, rate limit) run before anything else: a stopped question
costs no retrieval and no model call, and its reply says what to do.

A message that only states facts ("I'm a Project Finance Analyst.") is not a question for the
documents: it goes to the memory graph, and the reply says what was noted. Memory entries go into
every prompt as their own block (never cited); a question about the user or their company that no
document passage matches is answered from memory alone, or refused.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator

from memory.memory import Memory
from rag.citations import is_refusal, resolve_citations
from rag.context_budget import fit_hits, source_budget
from rag.conversations import ConversationStore
from rag.guardrails import Guardrails
from rag.llm.base import LLM, ChatMessage, LLMError, QueueListener
from rag.llm.generation_queue import QueueWait
from rag.prompting import SYSTEM_PROMPT, build_memory_messages, build_messages, format_memory
from rag.query_log import QueryLog
from rag.query_rewriter import HISTORY_TURNS, fallback_query, rewrite_query
from rag.retriever import HybridRetriever
from rag.support import SupportChecker, confidence
from ragchat.schemas import Answer, GuardrailOutcome, Hit, MemoryFacts, MemoryOutcome, ModelInfo, SentenceSupport
from ragchat.settings import REFUSAL_TEXT, Settings

log = logging.getLogger(__name__)

_FIRST_PERSON = re.compile(r"\b(i|i'm|me|my|mine|we|we're|us|our|ours)\b", re.IGNORECASE)


class AnswerStream:
    """Consume `tokens()` (e.g. with st.write_stream), then read `result()`."""

    def __init__(
        self,
        question: str,
        token_source: Iterator[str] | None,
        finish: Callable[[str, str | None], Answer],
        messages: list[ChatMessage] | None = None,
        guardrail: GuardrailOutcome | None = None,
    ) -> None:
        self.question = question
        self.messages = messages or []  # the prompt sent to the model; empty when it was not asked
        self.guardrail = guardrail  # set when a guardrail stopped the question: show a notice, not a stream
        self._source = token_source
        self._finish = finish
        self._answer: Answer | None = None

    def tokens(self) -> Iterator[str]:
        if self._source is None:
            self._answer = self._finish(REFUSAL_TEXT, None)
            yield REFUSAL_TEXT
            return
        parts: list[str] = []
        error: str | None = None
        try:
            for token in self._source:
                parts.append(token)
                yield token
        except LLMError as exc:
            error = str(exc)
        self._answer = self._finish("".join(parts), error)

    def close(self) -> None:
        """Stop generating: the consumer left before the end (a Streamlit rerun). The model's slot is
        freed at once rather than when the garbage collector finds the abandoned generator."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def result(self) -> Answer:
        if self._answer is None:
            for _ in self.tokens():
                pass
        assert self._answer is not None
        return self._answer


class Answerer:
    def __init__(
        self,
        settings: Settings,
        retriever: HybridRetriever,
        conversations: ConversationStore,
        llm_factory: Callable[[], LLM],
        models: Callable[[], ModelInfo],
        guardrails: Guardrails,
        support: SupportChecker,
        query_log: QueryLog,
        memory: Memory | None = None,
    ) -> None:
        self._settings = settings
        self._retriever = retriever
        self._conversations = conversations
        self._llm_factory = llm_factory
        self._models = models
        self._guardrails = guardrails
        self._support = support
        self._query_log = query_log
        self._memory = memory

    def ask(
        self,
        question: str,
        session_id: str | None = None,
        bm25_weight: float | None = None,
        rerank: bool = True,
        client_id: str | None = None,
        top_k: int | None = None,
        on_queued: QueueListener | None = None,
    ) -> AnswerStream:
        """Guardrails → rewrite a follow-up (only with history) → retrieve the top k (default: settings)
        → refuse without the LLM when nothing is relevant → stream an answer from the chunks that fit
        the context budget.

        The rate limit is kept per `client_id` (the app's browser session), else per `session_id`.
        `on_queued` hears the question's place while it waits for a busy model (the rewrite, then the
        answer); the time spent waiting is `timings_ms["queue_wait_ms"]`."""
        started = time.perf_counter()
        timings: dict[str, float] = {}
        queue_wait = QueueWait(on_queued)
        stopped = self._guardrails.check(question, client_id or session_id)
        timings["guardrails_ms"] = _ms(started)
        if stopped is not None:
            return self._stopped(question, session_id, stopped, started, timings)
        if self._memory is not None and self._memory.only_states_facts(question):
            return self._note_facts(question, session_id, started, timings)
        history = self._conversations.history(session_id, last=HISTORY_TURNS) if session_id else []
        history = [turn for turn in history if turn.guardrail is None]  # a stopped question is no context
        search_query = question
        if history:
            mark = time.perf_counter()
            try:
                search_query = rewrite_query(self._load_llm(timings), question, history, queue_wait)
            except Exception as exc:  # model missing, server down: still search, and let generation report it
                log.warning("query rewriting failed (%s); searching with the previous query added", exc)
                search_query = fallback_query(question, history)
            timings["rewrite_ms"] = _ms(mark)
        weight = self._settings.bm25_weight if bm25_weight is None else bm25_weight
        retrieval = self._retriever.search(search_query, top_k or self._settings.top_k, weight, rerank)
        timings["retrieve_ms"] = retrieval.timings_ms.get("search_ms", 0.0)
        relevant = [h for h in retrieval.hits if (h.scores.dense or 0.0) >= self._settings.min_relevance]
        memory = self._memory.context_for(question) if self._memory is not None else MemoryFacts()
        fixed = SYSTEM_PROMPT + question + search_query + format_memory(memory)
        budget = source_budget(
            self._settings.llm_context, self._settings.llm_max_tokens, fixed, self._settings.context_tokens
        )
        hits = fit_hits(relevant, budget)
        from_memory = self._about_memory(question, memory, hits)
        if from_memory:
            hits = []

        def finish(text: str, error: str | None) -> Answer:
            refused = (not hits and not from_memory) or (error is None and is_refusal(text))
            incomplete = error is not None and bool(text.strip()) and not refused
            support: list[SentenceSupport] = []  # checked only for an answer from the sources
            if refused:
                answer_text, citations = REFUSAL_TEXT, []
            elif error and not text.strip():
                answer_text, citations = f"The model could not answer: {error}", []
            elif from_memory:
                answer_text, citations = text.strip(), []  # memory is context, never a cited source
            else:
                answer_text, citations = resolve_citations(text, hits)
                mark = time.perf_counter()
                support = self._support.check(answer_text, citations, hits)
                timings["support_ms"] = _ms(mark)
            score = confidence(support)
            timings["queue_wait_ms"] = round(queue_wait.seconds * 1000, 1)
            timings["total_ms"] = _ms(started)
            answer = Answer(
                question=question,
                search_query=search_query,
                session_id=session_id,
                answer=answer_text,
                refused=refused,
                citations=citations,
                confidence=score,
                low_confidence=score is not None and score < self._settings.min_confidence,
                support=support,
                timings_ms=timings,
                models=self._models().model_copy(update={"reranker": retrieval.reranker}),
                error=error,
                incomplete=incomplete,
                hits=retrieval.candidates,
                memory_used=memory if (hits or from_memory) else MemoryFacts(),
            )
            return self._store(answer, hits)

        if from_memory:
            messages = build_memory_messages(question, memory)
        elif hits:
            messages = build_messages(question, hits, search_query, memory)
        else:
            return AnswerStream(question, None, finish)
        return AnswerStream(question, self._generate(messages, started, timings, queue_wait), finish, messages)

    def _store(self, answer: Answer, given: list[Hit]) -> Answer:
        """Every turn is logged; a turn with a session id is also kept with its conversation (both masked)."""
        if answer.session_id:
            self._conversations.append(answer.session_id, answer)
        self._query_log.record(answer, given)
        return answer

    def _stopped(
        self,
        question: str,
        session_id: str | None,
        outcome: GuardrailOutcome,
        started: float,
        timings: dict[str, float],
    ) -> AnswerStream:
        """A question a guardrail stopped: the notice is the reply, nothing was retrieved or generated."""

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = _ms(started)
            answer = Answer(
                question=question,
                search_query=question,
                session_id=session_id,
                answer=outcome.message,
                refused=True,
                guardrail=outcome,
                timings_ms=timings,
                models=self._models(),
            )
            return self._store(answer, [])

        return AnswerStream(question, iter([outcome.message]), finish, guardrail=outcome)

    def _about_memory(self, question: str, memory: MemoryFacts, hits: list[Hit]) -> bool:
        """A question about the user or their company ("what is my role?") that memory matches better
        than any document passage is answered from memory alone, without citations."""
        if self._memory is None or not memory or not _FIRST_PERSON.search(question):
            return False
        best_passage = max((h.scores.dense or 0.0 for h in hits), default=0.0)
        return self._memory.closeness(question, memory) > max(best_passage, self._settings.memory_min_relevance)

    def _note_facts(
        self, question: str, session_id: str | None, started: float, timings: dict[str, float]
    ) -> AnswerStream:
        """A message that only states facts: the memory graph runs now, and its note is the reply."""
        assert self._memory is not None
        memory = self._memory
        outcome = MemoryOutcome()

        def run_graph() -> Iterator[str]:
            nonlocal outcome
            mark = time.perf_counter()
            try:
                outcome = memory.remember(question, session_id)
            except Exception as exc:  # a locked or unwritable memory file: say so, lose nothing else
                log.exception("the memory graph failed")
                raise LLMError(f"memory could not be updated: {exc}") from exc
            finally:
                timings["memory_ms"] = _ms(mark)
            yield outcome.note or "Nothing to remember."

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = _ms(started)
            answer = Answer(
                question=question,
                search_query=question,
                session_id=session_id,
                answer=text or f"Nothing was remembered: {error}",
                refused=False,
                memory_writes=outcome.writes,
                memory_note=outcome.note or "Nothing to remember.",
                timings_ms=timings,
                models=self._models(),
                error=error,
            )
            return self._store(answer, [])

        return AnswerStream(question, run_graph(), finish)

    def _load_llm(self, timings: dict[str, float]) -> LLM:
        mark = time.perf_counter()
        llm = self._llm_factory()
        timings["llm_load_ms"] = timings.get("llm_load_ms", 0.0) + _ms(mark)
        return llm

    def _generate(
        self, messages: list[ChatMessage], started: float, timings: dict[str, float], on_queued: QueueListener
    ) -> Iterator[str]:
        llm = self._load_llm(timings)
        generation_started = time.perf_counter()
        first = True
        settings = self._settings
        for token in llm.stream(messages, settings.llm_max_tokens, settings.llm_temperature, on_queued):
            if first:
                timings["first_token_ms"] = _ms(started)
                first = False
            yield token
        timings["generate_ms"] = _ms(generation_started)
        prompt = getattr(llm, "last_timings", {})
        if prompt.get("prompt_n") is not None:
            # llama.cpp: prompt tokens processed now vs reused from its cache (the system prompt).
            timings["prompt_tokens"] = float(prompt["prompt_n"])
            timings["cached_prompt_tokens"] = float(prompt.get("cache_n", 0))


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
