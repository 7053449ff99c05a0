"""RAGAS through ragas itself, with stand-in judges: NaN, exceptions, bad JSON and timeouts become
"n/a (why)" for that metric and question, never a crashed run. (Unit tests of one component: the
judge and embeddings here are stand-ins; the end-to-end eval test runs the real pipeline.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel
from ragas.embeddings.base import BaseRagasEmbedding
from ragas.llms.base import InstructorBaseRagasLLM
from ragas.metrics.collections.answer_relevancy.util import AnswerRelevanceOutput
from ragas.metrics.collections.faithfulness.util import (
    NLIStatementOutput,
    StatementFaithfulnessAnswer,
    StatementGeneratorOutput,
)

from core.schemas import ModelInfo
from eval.judge import JudgeError, PortJudge, parse_reply
from eval.ragas_metrics import RagasScorer
from eval.results import EvalRun, MetricValue, QuestionResult
from eval.runner import RagasStatus, summarize
from providers.llm.base import LLM, ChatMessage, QueueListener


class WordCountEmbeddings(BaseRagasEmbedding):
    """Deterministic vectors: texts with the same words in the same amounts are identical."""

    VOCABULARY = ("hub", "setup", "minutes", "10", "warranty", "years")

    def embed_text(self, text: str, **kwargs: Any) -> list[float]:
        words = text.lower().replace(".", " ").split()
        return [float(words.count(w)) for w in self.VOCABULARY] + [0.001]

    async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
        return self.embed_text(text)


class ScriptedJudge(InstructorBaseRagasLLM):
    """Answers each ragas request from a table keyed by the requested output model."""

    def __init__(self, replies: dict[type[BaseModel], BaseModel | Exception]) -> None:
        self.replies = replies
        self.calls: list[str] = []

    def generate(self, prompt: str, response_model: type[BaseModel]) -> Any:
        self.calls.append(response_model.__name__)
        reply = self.replies[response_model]
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def agenerate(self, prompt: str, response_model: type[BaseModel]) -> Any:
        return self.generate(prompt, response_model)


def score(judge: InstructorBaseRagasLLM | None) -> dict[str, MetricValue]:
    scorer = RagasScorer(WordCountEmbeddings(), judge)
    return scorer.score(
        question="How long does setup take?",
        response="Setup takes 10 minutes.",
        answerable=True,
        refused=False,
        references=["10 minutes", "about 10 minutes"],
        retrieved_contexts=["Setup takes about 10 minutes.", "The warranty lasts two years."],
        reference_contexts=["Setup takes about 10 minutes."],
        given_contexts=["Setup takes about 10 minutes."],
    )


def test_non_llm_metrics_run_without_a_judge() -> None:
    scores = score(None)
    assert scores["non_llm_context_recall"].value == 1.0
    # ragas's average precision: the gold chunk is ranked first of two.
    assert scores["non_llm_context_precision"].value == pytest.approx(1.0)
    assert 0.0 < scores["string_similarity"].value < 1.0  # type: ignore[operator]
    # {setup, 10, minutes} against {10, minutes}: cosine 2 / (√3 · √2).
    assert scores["semantic_similarity"].value == pytest.approx(2 / 6**0.5, abs=1e-3)
    assert "faithfulness" not in scores and "answer_relevancy" not in scores


def test_a_working_judge_gives_numbers() -> None:
    judge = ScriptedJudge(
        {
            StatementGeneratorOutput: StatementGeneratorOutput(statements=["Setup takes 10 minutes."]),
            NLIStatementOutput: NLIStatementOutput(
                statements=[StatementFaithfulnessAnswer(statement="Setup takes 10 minutes.", reason="r", verdict=1)]
            ),
            AnswerRelevanceOutput: AnswerRelevanceOutput(question="How long does setup take?", noncommittal=0),
        }
    )
    scores = score(judge)
    assert scores["faithfulness"] == MetricValue(value=1.0)
    assert scores["answer_relevancy"].value == pytest.approx(1.0, abs=1e-3)


def test_nan_and_exceptions_from_the_judge_become_notes_not_crashes() -> None:
    judge = ScriptedJudge(
        {
            StatementGeneratorOutput: StatementGeneratorOutput(statements=[]),  # ragas returns NaN
            AnswerRelevanceOutput: JudgeError("judge timed out after 1 s"),
        }
    )
    scores = score(judge)
    assert scores["faithfulness"].value is None
    assert "NaN" in (scores["faithfulness"].note or "")
    assert scores["answer_relevancy"] == MetricValue(note="judge timed out after 1 s")
    assert scores["non_llm_context_recall"].value == 1.0  # the other metrics are unaffected


def test_an_unexpected_error_is_named_in_the_note() -> None:
    judge = ScriptedJudge(
        {StatementGeneratorOutput: ValueError("boom"), AnswerRelevanceOutput: RuntimeError("x" * 500)}
    )
    scores = score(judge)
    assert scores["faithfulness"].note == "ValueError: boom"
    assert len(scores["answer_relevancy"].note or "") <= 160


class ScriptedPort(LLM):
    """An LLM port that streams a fixed reply, optionally slowly, and records being closed."""

    label = "scripted"

    def __init__(self, reply: str, delay_s: float = 0.0) -> None:
        self.reply, self.delay_s, self.closed = reply, delay_s, False

    def stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        on_queued: QueueListener | None = None,
    ) -> Iterator[str]:
        try:
            for word in self.reply.split(" "):
                time.sleep(self.delay_s)
                yield word + " "
        finally:
            self.closed = True

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        return self.reply


def test_port_judge_parses_fenced_json_and_rejects_prose() -> None:
    judge = PortJudge(ScriptedPort('Sure!\n```json\n{"statements": ["A is B."]}\n```'), timeout_s=5, max_tokens=64)
    assert judge.generate("prompt", StatementGeneratorOutput).statements == ["A is B."]
    with pytest.raises(JudgeError, match="no JSON object"):
        PortJudge(ScriptedPort("I think it is fine."), 5, 64).generate("p", StatementGeneratorOutput)
    with pytest.raises(JudgeError, match="not valid StatementGeneratorOutput"):
        parse_reply('{"statement": "wrong key"}', StatementGeneratorOutput)


def test_port_judge_gives_up_at_its_time_limit_and_stops_the_generation() -> None:
    port = ScriptedPort(" ".join(["word"] * 200), delay_s=0.02)
    started = time.monotonic()
    with pytest.raises(JudgeError, match=r"timed out after 0\.1 s"):
        PortJudge(port, timeout_s=0.1, max_tokens=512).generate("p", StatementGeneratorOutput)
    assert time.monotonic() - started < 1.0
    assert port.closed


def _question(i: int, ragas: dict[str, MetricValue]) -> QuestionResult:
    return QuestionResult(
        id=f"q{i}",
        question="Q?",
        category="factual",
        answerable=True,
        reference="x",
        answer="x",
        search_query="Q?",
        refused=False,
        scores={"token_f1": 1.0, "refusal_accuracy": None},
        ragas=ragas,
    )


def test_aggregates_report_how_many_judge_scores_were_missing_and_why() -> None:
    nan = MetricValue(note="ragas returned NaN (the judge's reply held no usable statements)")
    questions = [
        _question(1, {"faithfulness": MetricValue(value=0.5)}),
        _question(2, {"faithfulness": nan}),
        _question(3, {"faithfulness": nan}),
        _question(4, {"faithfulness": MetricValue(note="judge timed out after 120 s")}),
    ]
    run = EvalRun(
        dataset="d",
        started_at=datetime.now(UTC),
        duration_s=1.0,
        models=ModelInfo(llm="l", embedder="e", reranker="none"),
        settings={},
        questions=questions,
        aggregates={},
        by_category={},
        latency_ms={},
        targets=[],
    )
    judged = summarize(run, RagasStatus(ran=True, judged=True, judge="scripted")).aggregates
    assert judged["faithfulness"].value == 0.5 and judged["faithfulness"].n == 1
    assert judged["faithfulness"].note == f"3 of 4 n/a; most often: {nan.note} (2×)"
    assert judged["token_f1"].value == 1.0 and judged["refusal_accuracy"].value is None
    assert judged["refusal_accuracy"].n == 0
    unjudged = summarize(run, RagasStatus(ran=True, judged=False, judge="none (set one)")).aggregates
    assert unjudged["faithfulness"].value is None
    assert unjudged["faithfulness"].note == "not run: judge none (set one)"
    off = summarize(run, RagasStatus(ran=False, judged=False, judge="")).aggregates
    assert off["string_similarity"].note == "not run (ragas turned off)"
