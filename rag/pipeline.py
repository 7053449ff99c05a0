"""The answer path, assembled in one place and read top to bottom:

guard → (a message that only states facts → note facts) → rewrite → retrieve (+ rerank) → select
evidence → decide answerability → build prompt → generate (streamed) → resolve citations → check
support → assemble → record.

Everything up to the prompt runs when `ask` is called; generation runs as the caller reads
`AnswerStream.tokens()`, and the stages after it run when the stream ends. The memory pass after an
answer belongs to the session (ragchat/session.py), not here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.schemas import Answer, GuardrailOutcome, MemoryFacts, MemoryOutcome, ModelInfo, SentenceSupport
from core.settings import REFUSAL_TEXT, Settings
from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener
from providers.llm.generation_queue import QueueWait
from rag.citations import CitationRules, is_refusal
from rag.conversations import ConversationStore
from rag.guardrails import Guardrails
from rag.query_log import QueryLog
from rag.retriever import HybridRetriever
from rag.stages import (
    BuildPrompt,
    CheckSupport,
    DecideAnswerability,
    Generate,
    Guard,
    MemoryPort,
    NoteFacts,
    Record,
    ResolveCitations,
    Retrieve,
    Rewrite,
    SelectEvidence,
    Timings,
    elapsed_ms,
)
from rag.support import SupportChecker, confidence

Finish = Callable[[str, str | None], Answer]


@dataclass(frozen=True)
class AskOptions:
    """How one question is asked. None means the setting's value.

    `client_id` keys the rate limit (the app's browser session), else `session_id` does; `on_queued`
    hears the question's place while it waits for a busy model (0: its turn came)."""

    session_id: str | None = None
    bm25_weight: float | None = None
    rerank: bool = True
    top_k: int | None = None
    client_id: str | None = None
    on_queued: QueueListener | None = None


class AnswerStream:
    """Consume `tokens()` (e.g. with st.write_stream), then read `result()`."""

    def __init__(
        self,
        question: str,
        token_source: Iterator[str] | None,
        finish: Finish,
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


class AnswerPipeline:
    def __init__(
        self,
        settings: Settings,
        retriever: HybridRetriever,
        conversations: ConversationStore,
        llm: Callable[[], LLM],
        models: Callable[[], ModelInfo],
        guardrails: Guardrails,
        support: SupportChecker,
        query_log: QueryLog,
        memory: MemoryPort | None = None,
    ) -> None:
        """`llm` and `models` are called when needed (loading a model takes seconds); `memory` is None
        when memory is turned off."""
        self._settings = settings
        self._models = models
        self._memory = memory
        self.guard = Guard(guardrails)
        self.note_facts = NoteFacts(memory)
        self.rewrite = Rewrite(llm, conversations, settings)
        self.retrieve = Retrieve(retriever)
        self.select_evidence = SelectEvidence(settings)
        self.decide = DecideAnswerability(memory, settings.memory_answer_min_similarity)
        self.build_prompt = BuildPrompt()
        self.generate = Generate(llm, settings)
        self.resolve_citations = ResolveCitations(CitationRules.from_settings(settings))
        self.check_support = CheckSupport(support)
        self.record = Record(conversations, query_log)

    def ask(self, question: str, options: AskOptions | None = None) -> AnswerStream:
        options = options or AskOptions()
        settings = self._settings
        started = time.perf_counter()
        timings: Timings = {}
        queue = QueueWait(options.on_queued)
        stopped = self.guard.run(question, options.client_id or options.session_id)
        timings["guardrails_ms"] = elapsed_ms(started)
        if stopped is not None:
            return self._stopped(question, options.session_id, stopped, started, timings)
        if self.note_facts.applies(question):
            return self._noted(question, options.session_id, started, timings)

        search_query = self.rewrite.run(question, options.session_id, queue, timings)
        weight = settings.bm25_weight if options.bm25_weight is None else options.bm25_weight
        retrieval = self.retrieve.run(search_query, options.top_k or settings.top_k, weight, options.rerank)
        timings["retrieve_ms"] = retrieval.timings_ms.get("search_ms", 0.0)
        memory = self._memory.context_for(question) if self._memory is not None else MemoryFacts()
        evidence = self.select_evidence.run(question, search_query, retrieval, memory)
        given = self.decide.run(question, evidence, memory)

        def finish(text: str, error: str | None) -> Answer:
            refused = given.mode == "none" or (error is None and is_refusal(text))
            support: list[SentenceSupport] = []  # checked only for an answer from the evidence
            if refused:
                answer_text, citations = REFUSAL_TEXT, []
            elif error and not text.strip():
                answer_text, citations = f"The model could not answer: {error}", []
            elif given.mode == "memory":
                answer_text, citations = text.strip(), []  # memory is context, never a cited source
            else:
                answer_text, citations = self.resolve_citations.run(text, given)
                support = self.check_support.run(answer_text, citations, given, timings)
            score = confidence(support)
            timings["queue_wait_ms"] = round(queue.seconds * 1000, 1)
            timings["total_ms"] = elapsed_ms(started)
            answer = Answer(
                question=question,
                search_query=search_query,
                session_id=options.session_id,
                answer=answer_text,
                refused=refused,
                citations=citations,
                confidence=score,
                low_confidence=score is not None and score < settings.low_confidence_threshold,
                support=support,
                timings_ms=timings,
                models=self._models().model_copy(update={"reranker": retrieval.reranker}),
                error=error,
                incomplete=error is not None and bool(text.strip()) and not refused,
                given=given,
                candidates=retrieval.candidates,
                memory_used=given.memory,
            )
            return self.record.run(answer)

        if given.mode == "none":
            return AnswerStream(question, None, finish)
        messages = self.build_prompt.run(question, search_query, given)
        return AnswerStream(question, self.generate.run(messages, started, timings, queue), finish, messages)

    def _stopped(
        self, question: str, session_id: str | None, outcome: GuardrailOutcome, started: float, timings: Timings
    ) -> AnswerStream:
        """A question a guardrail stopped: the notice is the reply, nothing was retrieved or generated."""

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = elapsed_ms(started)
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
            return self.record.run(answer)

        return AnswerStream(question, iter([outcome.message]), finish, guardrail=outcome)

    def _noted(self, message: str, session_id: str | None, started: float, timings: Timings) -> AnswerStream:
        """The memory graph runs as the stream is read; its note is the reply."""
        outcome = MemoryOutcome()

        def run_graph() -> Iterator[str]:
            nonlocal outcome
            try:
                outcome = self.note_facts.run(message, session_id, timings)
            except Exception as exc:  # a locked or unwritable memory file: say so, lose nothing else
                raise LLMError(f"memory could not be updated: {exc}") from exc
            yield outcome.note or "Nothing to remember."

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = elapsed_ms(started)
            answer = Answer(
                question=message,
                search_query=message,
                session_id=session_id,
                answer=text or f"Nothing was remembered: {error}",
                refused=False,
                memory_writes=outcome.writes,
                memory_note=outcome.note or "Nothing to remember.",
                timings_ms=timings,
                models=self._models(),
                error=error,
            )
            return self.record.run(answer)

        return AnswerStream(message, run_graph(), finish)
