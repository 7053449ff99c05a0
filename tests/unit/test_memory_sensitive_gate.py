"""The memory's sensitive-data gate: the line classifier on the real MiniLM embedder and its committed
weights, and how the model's yes/no answer is read (a stand-in model here; the real ones are measured by
scripts/train_sensitive_gate.py and, in the whole memory pass, by bench/memory_judgment.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import pytest

from core.settings import get_settings
from memory.sensitive_gate import SENSITIVE_WEIGHTS, MemoryGates, SensitiveGate, asked_probability
from providers.embedder import Embedder
from providers.llm.base import LLMError, Sampling, Token
from scripts.train_router import load
from scripts.train_sensitive_gate import DATA
from tests.recording_llm import RecordingLLM


class YesNoLLM(RecordingLLM):
    """Answers one token whose top alternatives give "Yes" the probability `yes`."""

    constrains = True
    gives_logprobs = True
    label = "llama.cpp · qwen2.5-coder-1.5b (stand-in)"

    def __init__(self, yes: float) -> None:
        super().__init__("")
        self.yes = yes

    def stream_tokens(self, messages, sampling: Sampling, on_queued=None) -> Iterator[Token]:  # type: ignore[no-untyped-def]
        self.calls.append(messages)
        assert (sampling.max_tokens, sampling.top_logprobs) == (1, 10) and sampling.grammar
        split = {"Yes": 0.9 * self.yes, " Yes": 0.1 * self.yes, "No": 1 - self.yes}
        yield Token(text="Yes", alternatives={k: math.log(v) for k, v in split.items() if v > 0})


@pytest.fixture(scope="module")
def embed():  # type: ignore[no-untyped-def]
    return Embedder(get_settings()).embed


def test_the_committed_weights_report_their_training_set_and_threshold() -> None:
    report = json.loads(SENSITIVE_WEIGHTS.read_text(encoding="utf-8"))["report"]
    assert report["rows"] == len(load(DATA / "statements.jsonl"))
    assert report["threshold"] == get_settings().memory_sensitive_threshold
    assert report["cross_validation"]["sensitive_precision"] >= 0.9


def test_every_spelling_of_yes_counts_and_a_model_without_log_probabilities_answers_in_json() -> None:
    assert asked_probability(YesNoLLM(0.6), "note that I'm left-handed") == pytest.approx(0.6)
    assert asked_probability(RecordingLLM('{"answer": true}'), "note that I'm left-handed") == 1.0
    assert asked_probability(RecordingLLM('{"answer": false}'), "I'm left-handed") == 0.0
    with pytest.raises(LLMError):
        asked_probability(RecordingLLM("not json"), "I'm left-handed")


@pytest.mark.parametrize(
    ("line", "yes", "withheld", "asked"),
    [
        ("The user has epilepsy.", 0.1, True, True),  # sensitive, not asked: withheld
        ("The user has epilepsy.", 0.95, False, True),  # sensitive, asked: kept
        ("The user looks after the Rotterdam warehouse rota.", 0.1, False, False),  # not sensitive: no model call
    ],
)
def test_a_sensitive_line_is_withheld_unless_the_message_asks_to_keep_it(
    embed, line: str, yes: float, withheld: bool, asked: bool
) -> None:  # type: ignore[no-untyped-def]
    llm = YesNoLLM(yes)
    gate = SensitiveGate(embed, lambda: llm, MemoryGates.from_settings(get_settings()))
    assert gate.withheld("the message", line) is withheld
    assert bool(llm.calls) is asked


def test_a_model_nobody_calibrated_withholds_nothing_and_a_json_answer_counts_at_one_half(embed) -> None:  # type: ignore[no-untyped-def]
    gates = MemoryGates(0.4, 0.8, {"qwen2.5-coder-1.5b": 0.8}, 0.2, {}, 0.4)
    uncalibrated = YesNoLLM(0.1)
    uncalibrated.label = "llama.cpp · some-other-model"
    assert gates.asked_threshold(uncalibrated) is None
    assert not SensitiveGate(embed, lambda: uncalibrated, gates).withheld("the message", "The user has epilepsy.")
    assert gates.asked_threshold(RecordingLLM('{"answer": false}')) == 0.5
    answers_no = RecordingLLM('{"answer": false}')
    assert SensitiveGate(embed, lambda: answers_no, gates).withheld("x", "The user has epilepsy.")
