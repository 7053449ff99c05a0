"""The memory's lasting-fact gate on the real MiniLM embedder and its committed weights: moods, thanks,
maybes and one-offs are not written, facts in any file and language are (the gate itself is measured
by scripts/train_lasting_gate.py, the whole memory pass by bench/memory_judgment.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.schemas import MemoryOutcome, MemorySkip
from core.settings import get_settings
from memory.graph import MemoryGraph
from memory.lasting_gate import LASTING_WEIGHTS, NOT_LASTING, LastingGate
from memory.markdown_store import memory_files
from memory.sensitive_gate import MemoryGates
from providers.embedder import Embedder
from rag.messages import memory_note
from scripts.train_lasting_gate import DATA
from scripts.train_router import load
from tests.recording_llm import RecordingLLM


@pytest.fixture(scope="module")
def embed():  # type: ignore[no-untyped-def]
    return Embedder(get_settings()).embed


def test_the_committed_weights_report_their_training_set_and_threshold() -> None:
    report = json.loads(LASTING_WEIGHTS.read_text(encoding="utf-8"))["report"]
    assert report["rows"] == len(load(DATA))
    assert report["threshold"] == get_settings().memory_lasting_threshold
    assert report["cross_validation"]["not_lasting_precision"] >= 0.9


@pytest.mark.parametrize(
    ("message", "line", "dropped"),
    [
        ("ugh, the printer jammed again, so annoying", "The user is annoyed about the printer.", True),
        ("thank you so much, that saved my afternoon", "The user is grateful for the help.", True),
        ("I could switch teams someday, who knows", "The user might switch teams someday.", True),
        ("at a conference in Porto today so replies may be slow", "The user is at a conference in Porto today.", True),
        ("I run the Oslo payroll team", "The user manages the Oslo payroll team.", False),
        ("we pay all invoices within 45 days", "The company pays invoices within 45 days.", False),
        ("please answer me in French from now on", "The user wants answers in French.", False),
        ("Ich arbeite in Basel.", "Der Nutzer arbeitet in Basel.", False),
    ],
)
def test_a_line_that_is_no_lasting_fact_is_dropped(embed, message: str, line: str, dropped: bool) -> None:  # type: ignore[no-untyped-def]
    assert LastingGate(embed, get_settings().memory_lasting_threshold).dropped(message, line) is dropped


def test_the_memory_pass_says_why_a_line_was_not_written(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reply = json.dumps(
        {
            "facts": [
                {"statement": "The user is the Oslo payroll lead.", "target": "USER"},
                {"statement": "The user is annoyed that the coffee machine is broken.", "target": "USER"},
            ]
        }
    )
    files = memory_files(tmp_path)
    settings = get_settings()
    graph = MemoryGraph(lambda: RecordingLLM(reply), embed, files, 0.75, MemoryGates.from_settings(settings), 0.5)
    outcome = graph.run("I'm the Oslo payroll lead, and the coffee machine is broken again, so annoying")
    assert [w.summary for w in outcome.writes] == ["The user is the Oslo payroll lead."]
    assert [(s.text, s.reason) for s in outcome.skipped] == [
        ("The user is annoyed that the coffee machine is broken.", NOT_LASTING)
    ]
    assert files["USER"].entries() == ["The user is the Oslo payroll lead."]


def test_a_line_that_changes_a_stored_fact_is_not_put_to_the_gate(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message, line = (
        "I don't live in Hannover anymore, moved to Bremen in the spring",
        "The user moved to Bremen in the spring.",
    )
    settings = get_settings()
    assert LastingGate(embed, settings.memory_lasting_threshold).dropped(message, line), "alone, it reads as an event"
    files = memory_files(tmp_path)
    files["USER"].add("The user lives in Hannover.")
    reply = json.dumps({"facts": [{"statement": line, "target": "USER"}]})
    graph = MemoryGraph(lambda: RecordingLLM(reply), embed, files, 0.75, MemoryGates.from_settings(settings), 0.5)
    [write] = graph.run(message).writes
    assert (write.action, write.replaced) == ("replaced", "The user lives in Hannover.")
    assert files["USER"].entries() == [line]


def test_the_reply_says_why_a_mood_was_not_noted() -> None:
    outcome = MemoryOutcome(skipped=[MemorySkip(text="The user is tired today.", reason=NOT_LASTING)])
    assert memory_note(outcome, "en") == f"Nothing to remember ({NOT_LASTING})."
    assert "(" not in NOT_LASTING  # one pair of brackets in the reply
