"""RAGAS metrics, computed by ragas 0.4.3 itself, one question at a time, never failing the run.

Always (no LLM):
- non_llm_context_recall / non_llm_context_precision (ragas `NonLLMContextRecall`,
  `NonLLMContextPrecisionWithReference`): retrieved chunks against reference contexts, matched by
  Levenshtein similarity ≥ 0.5. Our reference contexts are the indexed chunks that hold the gold
  evidence: a gold sentence against a 200-token chunk never reaches 0.5, a chunk against itself is 1.
  ragas 0.4.3 has these two only in its legacy module (its new `collections` API has no non-LLM
  context metric), so they are imported from there.
- string_similarity (`collections.NonLLMStringSimilarity`, Levenshtein, best reference) and
  semantic_similarity (`collections.SemanticSimilarity`, cosine of our embedder's vectors).

With a judge (RAGCHAT_EVAL_JUDGE): faithfulness and answer_relevancy (`collections.Faithfulness`,
`collections.AnswerRelevancy` with strictness 1: one generated question per answer, not three, on a
2-core machine). A judge that times out, replies with unusable JSON or makes ragas return NaN gives
"n/a (why)" for that question; the aggregate says how many questions had a number.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from eval.results import MetricValue

NON_LLM_METRICS = ("non_llm_context_recall", "non_llm_context_precision", "string_similarity", "semantic_similarity")
JUDGED_METRICS = ("faithfulness", "answer_relevancy")
_NOTE_LIMIT = 160


class RagasScorer:
    def __init__(self, embeddings: Any, judge: Any | None = None) -> None:
        """`embeddings`: a ragas `BaseRagasEmbedding`; `judge`: a ragas `InstructorBaseRagasLLM` or None."""
        from ragas.metrics._context_precision import NonLLMContextPrecisionWithReference
        from ragas.metrics._context_recall import NonLLMContextRecall
        from ragas.metrics.collections import AnswerRelevancy, Faithfulness, NonLLMStringSimilarity, SemanticSimilarity

        self._context_recall = NonLLMContextRecall()
        self._context_precision = NonLLMContextPrecisionWithReference()
        self._string = NonLLMStringSimilarity()
        self._semantic = SemanticSimilarity(embeddings=embeddings)
        self._faithfulness = Faithfulness(llm=judge) if judge is not None else None
        self._relevancy = AnswerRelevancy(llm=judge, embeddings=embeddings, strictness=1) if judge is not None else None

    @property
    def judged(self) -> bool:
        return self._faithfulness is not None

    def score(
        self,
        *,
        question: str,
        response: str,
        answerable: bool,
        refused: bool,
        references: Sequence[str],
        retrieved_contexts: Sequence[str],
        reference_contexts: Sequence[str],
        given_contexts: Sequence[str],
    ) -> dict[str, MetricValue]:
        """The metrics that apply to this question (a metric that does not apply is absent)."""
        from ragas.dataset_schema import SingleTurnSample

        scores: dict[str, MetricValue] = {}
        if answerable and reference_contexts:
            sample = SingleTurnSample(
                retrieved_contexts=list(retrieved_contexts) or [""], reference_contexts=list(reference_contexts)
            )
            scores["non_llm_context_recall"] = outcome(lambda: self._context_recall.single_turn_ascore(sample))
            scores["non_llm_context_precision"] = outcome(lambda: self._context_precision.single_turn_ascore(sample))
        if answerable and references:
            scores["string_similarity"] = _best(
                [outcome(partial(self._string.ascore, reference=r, response=response)) for r in references]
            )
            scores["semantic_similarity"] = _best(
                [outcome(partial(self._semantic.ascore, reference=r, response=response)) for r in references]
            )
        if self._faithfulness is not None and self._relevancy is not None and not refused and response.strip():
            if given_contexts:
                faithfulness = self._faithfulness
                scores["faithfulness"] = outcome(
                    lambda: faithfulness.ascore(
                        user_input=question, response=response, retrieved_contexts=list(given_contexts)
                    )
                )
            relevancy = self._relevancy
            scores["answer_relevancy"] = outcome(lambda: relevancy.ascore(user_input=question, response=response))
        return scores


def _run_coroutine(make: Callable[[], Awaitable[Any]]) -> Any:
    """asyncio.run, or the same in a worker thread when this thread already runs an event loop (a
    caller inside async code, Playwright's sync API): asyncio.run refuses to nest."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(make))
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _awaited(make)).result()


def outcome(make: Callable[[], Awaitable[Any]]) -> MetricValue:
    """Run one ragas coroutine; a number, or None with why (exception, timeout, NaN)."""
    try:
        result = _run_coroutine(make)
    except Exception as exc:  # one metric on one question must not end the run
        return MetricValue(note=_why(exc))
    value = getattr(result, "value", result)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return MetricValue(note=f"ragas returned {value!r}, not a number")
    if math.isnan(number):
        return MetricValue(note="ragas returned NaN (the judge's reply held no usable statements)")
    return MetricValue(value=number)


async def _awaited(make: Callable[[], Awaitable[Any]]) -> Any:
    return await make()


def _best(values: list[MetricValue]) -> MetricValue:
    numbers = [v for v in values if v.value is not None]
    return max(numbers, key=lambda v: v.value or 0.0) if numbers else values[0]


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc) or type(exc).__name__
    text = text if type(exc).__name__ == "JudgeError" else f"{type(exc).__name__}: {text}"
    flat = " ".join(text.split())
    return flat if len(flat) <= _NOTE_LIMIT else flat[: _NOTE_LIMIT - 1] + "…"
