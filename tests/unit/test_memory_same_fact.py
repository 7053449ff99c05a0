"""A new memory line beside a stored one on the same subject: a rewording is not written, a change
replaces; the model's answers come from a stand-in here (the real models are calibrated by
scripts/train_same_fact.py and measured in the whole memory pass by bench/memory_judgment.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.settings import get_settings
from memory.graph import MemoryGraph
from memory.markdown_store import memory_files
from memory.same_fact import same_probability
from memory.sensitive_gate import MemoryGates
from providers.embedder import Embedder
from providers.llm.base import ChatMessage, Sampling, Token
from tests.recording_llm import RecordingLLM

STORED = "The company's HQ is in Aarhus."
NEW = "The company's head office is in Aarhus."


class ScriptedLLM(RecordingLLM):
    """Writes NEW as the message's fact, answers `relation` with `judged`, and every yes/no question
    with P(Yes) = `yes`."""

    constrains = True
    gives_logprobs = True

    def __init__(self, yes: float, judged: str, label: str = "llama.cpp · qwen2.5-coder-1.5b (stand-in)") -> None:
        super().__init__("")
        self.yes, self.judged, self.label = yes, judged, label

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        self.calls.append(messages)
        if "relation" in schema["properties"]:
            return json.dumps({"relation": self.judged})
        return json.dumps({"facts": [{"statement": NEW, "target": "COMPANY"}]})

    def stream_tokens(self, messages, sampling: Sampling, on_queued=None) -> Iterator[Token]:  # type: ignore[no-untyped-def]
        self.calls.append(messages)
        yield Token(text="Yes", alternatives={"Yes": math.log(self.yes), "No": math.log(1 - self.yes)})


@pytest.fixture(scope="module")
def embed():  # type: ignore[no-untyped-def]
    return Embedder(get_settings()).embed


def run(embed, tmp_path: Path, llm: ScriptedLLM) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    files = memory_files(tmp_path)
    files["COMPANY"].add(STORED)
    gates = MemoryGates(0.2, 0.8, {}, 0.3, {"qwen2.5-coder-1.5b": 0.5}, 0.4)
    outcome = MemoryGraph(lambda: llm, embed, files, 0.75, gates, 0.5).run("Our head office is in Aarhus.")
    return [w.action for w in outcome.writes], files["COMPANY"].entries()


def test_a_rewording_the_model_reads_as_implied_both_ways_is_not_written(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run(embed, tmp_path, ScriptedLLM(0.9, "replaces")) == ([], [STORED])


def test_a_line_not_implied_replaces_whatever_relation_says(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run(embed, tmp_path, ScriptedLLM(0.1, "same")) == (["replaced"], [NEW])


def test_a_model_nobody_calibrated_is_asked_for_the_relation(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run(embed, tmp_path, ScriptedLLM(0.1, "same", "llama.cpp · another-model")) == ([], [STORED])
    assert run(embed, tmp_path / "b", ScriptedLLM(0.9, "replaces", "llama.cpp · another-model")) == (
        ["replaced"],
        [NEW],
    )


def test_same_probability_is_the_mean_of_both_directions() -> None:
    llm = ScriptedLLM(0.8, "separate")
    assert same_probability(llm, STORED, NEW) == pytest.approx(0.8)
    assert [m[1].content for m in llm.calls] == [f"A: {STORED}\nB: {NEW}", f"A: {NEW}\nB: {STORED}"]
