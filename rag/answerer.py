"""Ask: retrieve → refuse without the LLM when nothing is relevant → stream a grounded answer →
validate its citations."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from rag.citations import is_refusal, resolve_citations
from rag.llm.base import LLM, LLMError
from rag.prompting import build_messages
from rag.retriever import DenseRetriever
from ragchat.schemas import Answer, Hit, ModelInfo
from ragchat.settings import REFUSAL_TEXT, Settings


class AnswerStream:
    """Consume `tokens()` (e.g. with st.write_stream), then read `result()`."""

    def __init__(
        self,
        question: str,
        hits: list[Hit],
        token_source: Iterator[str] | None,
        finish: Callable[[str, str | None], Answer],
    ) -> None:
        self.question = question
        self.hits = hits
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
        retriever: DenseRetriever,
        llm_factory: Callable[[], LLM],
        models: Callable[[], ModelInfo],
    ) -> None:
        self._settings = settings
        self._retriever = retriever
        self._llm_factory = llm_factory
        self._models = models

    def ask(self, question: str) -> AnswerStream:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        candidates = self._retriever.search(question, self._settings.top_k)
        timings["retrieve_ms"] = _ms(started)
        hits = [h for h in candidates if (h.scores.dense or 0.0) >= self._settings.min_relevance]

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = _ms(started)
            refused = not hits or (error is None and is_refusal(text))
            if refused:
                answer_text, citations = REFUSAL_TEXT, []
            elif error and not text.strip():
                answer_text, citations = f"The model could not answer: {error}", []
            else:
                answer_text, citations = resolve_citations(text, hits)
            return Answer(
                question=question,
                search_query=question,
                answer=answer_text,
                refused=refused,
                citations=citations,
                timings_ms=timings,
                models=self._models(),
                error=error,
                hits=candidates,
            )

        if not hits:
            return AnswerStream(question, candidates, None, finish)
        return AnswerStream(question, candidates, self._generate(question, hits, started, timings), finish)

    def _generate(self, question: str, hits: list[Hit], started: float, timings: dict[str, float]) -> Iterator[str]:
        load_started = time.perf_counter()
        llm = self._llm_factory()
        timings["llm_load_ms"] = _ms(load_started)
        messages = build_messages(question, hits)
        generation_started = time.perf_counter()
        first = True
        for token in llm.stream(messages, self._settings.llm_max_tokens, self._settings.llm_temperature):
            if first:
                timings["first_token_ms"] = _ms(started)
                first = False
            yield token
        timings["generate_ms"] = _ms(generation_started)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
