"""The answerability check's rules: the calibration file's `checked` part, the early decision while
a check will follow, the rescoring, and the check call itself (a stand-in LLM, one component)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.schemas import Evidence, Given, Hit
from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener, Sampling, Token
from providers.llm.generation_queue import QueueWait
from rag import answerability
from rag.answer_format import Reply
from rag.answerability import CHECK_SIGNAL, Abstention, Calibration, decide, recheck
from rag.prompting import CHECK_SYSTEM_PROMPT
from rag.question import AskOptions, QuestionState
from rag.stages import CheckAnswerability
from tests.chunks import text_hit

LEVELS = ("lenient", "balanced", "strict")
SIGNALS = {"p_none": 0.2, "phrase_mean_logprob": -0.1, "phrase_min_logprob": -0.3, "phrase_missing": 0.0}
SIGNALS |= {"question_missing": 0.0, "best_dense": 0.6}


def part(weights: dict[str, float], bias: float, thresholds: dict[str, float]) -> dict:
    return {
        "weights": weights,
        "means": dict.fromkeys(weights, 0.0),
        "scales": dict.fromkeys(weights, 1.0),
        "bias": bias,
        "thresholds": thresholds,
    }


@pytest.fixture
def calibrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Calibration:
    """A calibration file for "packaged-x": the phrase-line score is sigmoid(4·P(NONE) − 1) ≈ 0.45 here,
    refused at 0.4 (strict), 0.5 (balanced), 0.9 (lenient); after the check, sigmoid(8·check − 4)."""
    entry = part({"p_none": 4.0}, -1.0, {"lenient": 0.9, "balanced": 0.5, "strict": 0.4})
    entry["checked"] = part({CHECK_SIGNAL: 8.0}, -4.0, {"lenient": 0.8, "balanced": 0.5, "strict": 0.3})
    entry["checked"]["held_out_rates"] = {level: {"refusal": 0.6, "false_refusal": 0.1} for level in LEVELS}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"models": {"packaged-x": entry}}), encoding="utf-8")
    monkeypatch.setattr(answerability, "CALIBRATION_FILE", path)
    answerability.calibrations.cache_clear()
    yield answerability.calibration_for("llama.cpp · packaged-x (Q4)")
    answerability.calibrations.cache_clear()


def hit(text: str) -> Hit:
    return text_hit(text, chunk_id="c1", doc_id="d1", source="harbour.pdf", page=2, dense=0.6)


GIVEN = Given(mode="sources", evidence=[Evidence(id=1, hit=hit("The harbour opened in 1871."))])


def reply(p_none: float) -> Reply:
    return Reply(phrase="1871", p_none=p_none, phrase_logprobs=[-0.1])


def test_the_checked_part_is_read_and_its_rates_are_the_levels(calibrated: Calibration) -> None:
    assert calibrated.checked is not None and calibrated.checked.weights == {CHECK_SIGNAL: 8.0}
    assert answerability.checks_answerability("llama.cpp · packaged-x (Q4)")
    assert not answerability.checks_answerability("ollama · llama3.2")
    rates = answerability.level_rates("llama.cpp · packaged-x (Q4)", checking=True)
    assert rates is not None and rates["balanced"].refusal == 0.6
    assert answerability.level_rates("llama.cpp · packaged-x (Q4)", checking=False) is None  # its own rates: none


def test_while_a_check_will_follow_only_the_lenient_level_refuses_early(calibrated: Calibration) -> None:
    question, evidence = "When did the harbour open?", GIVEN.hits
    alone = decide(reply(0.3), question, evidence, 0.6, "packaged-x", "strict")
    early = decide(reply(0.3), question, evidence, 0.6, "packaged-x", "strict", checking=True)
    assert alone.refuse and alone.threshold == 0.4  # 0.55 ≥ strict's 0.4
    assert not early.refuse and early.threshold == 0.9  # the check decides


def test_recheck_refuses_at_the_checked_threshold_and_keeps_every_signal(calibrated: Calibration) -> None:
    first = Abstention(score=0.4, refuse=False, threshold=0.9, calibrated=True, signals=dict(SIGNALS))
    sure = recheck(first, 0.9, "packaged-x", "balanced")  # sigmoid(3.2) ≈ 0.96
    unsure = recheck(first, 0.1, "packaged-x", "balanced")  # sigmoid(−3.2) ≈ 0.04
    assert sure.refuse and sure.threshold == 0.5 and sure.score == pytest.approx(1 / (1 + math.exp(-3.2)))
    assert not unsure.refuse and unsure.signals == {**SIGNALS, CHECK_SIGNAL: 0.1}
    refused = Abstention(score=0.95, refuse=True, threshold=0.9, calibrated=True, signals=dict(SIGNALS))
    assert recheck(refused, 0.0, "packaged-x", "balanced") is refused  # an early refusal stands


class OneToken(LLM):
    """Gives one token whose alternatives put `p_none` on NONE; records the prompt."""

    label = "llama.cpp · packaged-x (Q4)"
    gives_logprobs = True

    def __init__(self, p_none: float, fail: bool = False) -> None:
        self.p_none, self.fail = p_none, fail
        self.calls: list[tuple[list[ChatMessage], Sampling]] = []

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        self.calls.append((messages, sampling))
        if self.fail:
            raise LLMError("server down")
        yield Token(text="NONE", alternatives={"NONE": math.log(self.p_none), "187": math.log(1 - self.p_none)})

    def stream(self, messages, max_tokens, temperature, on_queued=None):
        raise NotImplementedError

    def complete_json(self, messages, schema, max_tokens):
        raise NotImplementedError


def test_the_check_asks_one_token_over_the_same_evidence_and_rescores(calibrated: Calibration) -> None:
    llm = OneToken(p_none=0.9)
    first = Abstention(score=0.4, refuse=False, threshold=0.9, calibrated=True, signals=dict(SIGNALS))
    state = asked("When did it open?", "When did the harbour open?")
    checked = CheckAnswerability(lambda: llm, True, 20).run(state, first)
    assert checked.refuse and checked.signals[CHECK_SIGNAL] == pytest.approx(0.9)
    ((messages, sampling),) = llm.calls
    assert messages[0].content == CHECK_SYSTEM_PROMPT  # the same system prompt every time
    assert "[1] (harbour.pdf, p. 2)\nThe harbour opened in 1871." in messages[1].content
    assert messages[1].content.endswith("Question: When did the harbour open?")  # the question on its own
    assert sampling.max_tokens == 1 and sampling.top_logprobs == 20 and sampling.temperature == 0.0
    assert "check_ms" in state.timings


def test_no_check_when_off_failing_or_already_refused(calibrated: Calibration) -> None:
    first = Abstention(score=0.4, refuse=False, threshold=0.9, calibrated=True, signals=dict(SIGNALS))
    state = asked("When did it open?")
    off = OneToken(0.9)
    assert CheckAnswerability(lambda: off, False, 20).run(state, first) is first and not off.calls
    failing = OneToken(0.9, fail=True)
    assert CheckAnswerability(lambda: failing, True, 20).run(state, first) is first and failing.calls
    refused = Abstention(score=0.95, refuse=True, threshold=0.9, calibrated=True, signals=dict(SIGNALS))
    quiet = OneToken(0.9)
    assert CheckAnswerability(lambda: quiet, True, 20).run(state, refused) is refused and not quiet.calls
    other = OneToken(0.9)
    other.label = "ollama · llama3.2"  # no calibration with the check: not worth a call
    assert CheckAnswerability(lambda: other, True, 20).run(state, first) is first and not other.calls


def asked(question: str, search_query: str = "") -> QuestionState:
    """The question's state once the evidence is given, as the answer's assembling stage checks it."""
    state = QuestionState(question, AskOptions(), "balanced", QueueWait(), search_query=search_query)
    state.given = GIVEN
    return state
