"""A standing wish about answers that the memory model listed no fact for: the preference gate (real
MiniLM, committed weights) sends it back to the model for that wish alone; a stand-in model here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.settings import get_settings
from memory.graph import MemoryGraph
from memory.markdown_store import memory_files
from memory.preference_gate import PREFERENCE_WEIGHTS, PreferenceGate
from memory.sensitive_gate import MemoryGates
from providers.embedder import Embedder
from providers.llm.base import ChatMessage
from scripts.train_preference_gate import examples
from tests.recording_llm import RecordingLLM

WISH = "The user wants replies that do not start with a summary of the question."


class ListsNothingLLM(RecordingLLM):
    """Lists no fact (as the 1.5B does for many commands), and states `wish` when asked for one."""

    def __init__(self, wish: str) -> None:
        super().__init__("")
        self.wish = wish

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        self.calls.append(messages)
        if "facts" in schema["properties"]:
            return json.dumps({"facts": []})
        return json.dumps({"statement": self.wish})


@pytest.fixture(scope="module")
def embed():  # type: ignore[no-untyped-def]
    return Embedder(get_settings()).embed


def test_the_committed_weights_report_their_training_set_and_threshold() -> None:
    report = json.loads(PREFERENCE_WEIGHTS.read_text(encoding="utf-8"))["report"]
    assert report["messages"] == len(examples()[0])
    assert report["threshold"] == get_settings().memory_preference_threshold
    assert report["cross_validation"]["preference_precision"] >= 0.9


def graph(embed, folder: Path, llm: ListsNothingLLM) -> MemoryGraph:  # type: ignore[no-untyped-def]
    gates = MemoryGates.from_settings(get_settings())
    return MemoryGraph(lambda: llm, embed, memory_files(folder), 0.75, gates, 0.5)


def test_a_standing_wish_the_model_listed_nothing_for_is_asked_for_and_written(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = "never start your replies with a summary of my question"
    assert PreferenceGate(embed, get_settings().memory_preference_threshold).states_preference(message)
    llm = ListsNothingLLM(WISH)
    assert [w.summary for w in graph(embed, tmp_path, llm).run(message).writes] == [WISH]
    assert len(llm.calls) == 2  # the facts, then the wish


@pytest.mark.parametrize(
    "message", ["give me the answer in a table this time", "What does the policy say about taxis?"]
)
def test_a_one_off_request_or_a_question_is_not_asked_for_a_wish(embed, tmp_path: Path, message: str) -> None:  # type: ignore[no-untyped-def]
    llm = ListsNothingLLM(WISH)
    outcome = graph(embed, tmp_path, llm).run(message)
    assert outcome.writes == []
    assert len(llm.calls) <= 1  # the gate may spare even the facts call; never the wish call


@pytest.mark.parametrize(
    "message",
    ["how do we book the big meeting room", "If I join the Paris office, do I keep my car allowance?"],
)
def test_a_message_that_only_asks_or_supposes_costs_no_model_call(embed, tmp_path: Path, message: str) -> None:  # type: ignore[no-untyped-def]
    llm = ListsNothingLLM(WISH)
    outcome = graph(embed, tmp_path, llm).run(message)
    assert outcome.writes == [] and llm.calls == []
    assert [skip.reason for skip in outcome.skipped] in (["it only asks"], ["no lasting fact in it"])


class ListsTheWishLLM(ListsNothingLLM):
    """Lists the wish as the message's fact (what the 1.5B does with a request made standing)."""

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        self.calls.append(messages)
        return json.dumps({"facts": [{"target": "USER", "statement": self.wish}]})


def test_a_request_made_standing_is_kept_even_where_the_preference_gate_misses_it(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wish = "The user wants tables instead of bullet lists."
    message = "give me tables instead of bullet lists from now on"
    llm = ListsTheWishLLM(wish)
    assert [w.summary for w in graph(embed, tmp_path, llm).run(message).writes] == [wish]
    once = "give me tables instead of bullet lists for the Q3 figures"
    assert graph(embed, tmp_path / "once", ListsTheWishLLM(wish)).run(once).writes == []
