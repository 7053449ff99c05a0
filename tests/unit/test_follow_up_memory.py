"""A follow-up is about the user when its standalone rewrite is: "And since when?" names no one, but
after "What is my role?" its rewrite does, and its prompt carries the memory facts. The pipeline over
stand-in parts; the memory is a stand-in that gives its facts to questions in the first person."""

from __future__ import annotations

from pathlib import Path

from core.schemas import MemoryFacts, MemoryOutcome
from core.settings import get_settings
from memory.relevance import speaks_of_self
from rag.pipeline import AskOptions
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM
from tests.unit.test_grounded_markers import TwoPassages

FACT = "The user has been the site safety officer since 2019."


class FirstPersonMemory:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def context_for(self, question: str, lang: str) -> MemoryFacts:
        self.asked.append(question)
        return MemoryFacts(user=[FACT]) if speaks_of_self(question, lang) else MemoryFacts()

    def closeness(self, question: str, facts: MemoryFacts) -> float:
        return 0.0  # never closer than the passages: the answer is from the sources, with the memory block

    def speaks_of_self(self, question: str, lang: str) -> bool:
        return speaks_of_self(question, lang)

    def only_states_facts(self, message: str) -> bool:
        return False

    def remember(self, message: str, session_id: str | None = None, lang: str = "en") -> MemoryOutcome:
        return MemoryOutcome()  # nothing written: the answer's prompt is what is checked


def _follow_up(tmp_path: Path, first: str, rewrite: str) -> tuple[FirstPersonMemory, RecordingLLM]:
    """Ask `first`, then "And since when?" in the same conversation, the model rewriting it to `rewrite`;
    the memory's record of what it was asked and the model's calls for the follow-up alone."""
    memory, llm = FirstPersonMemory(), RecordingLLM(rewrite)
    pipeline = build_pipeline(get_settings(home=tmp_path), TwoPassages(), lambda: llm, memory)
    pipeline.ask(first, AskOptions(session_id="s")).result()
    llm.calls.clear()
    pipeline.ask("And since when?", AskOptions(session_id="s")).result()
    return memory, llm


def test_a_follow_up_whose_rewrite_is_about_the_user_gets_the_facts(tmp_path: Path) -> None:
    memory, llm = _follow_up(tmp_path, "What is my role?", "Since when have I been in my role?")
    assert memory.asked[-2:] == ["And since when?", "Since when have I been in my role?"]
    assert FACT in llm.calls[-1][-1].content


def test_a_follow_up_about_something_else_stays_without_them(tmp_path: Path) -> None:
    memory, llm = _follow_up(tmp_path, "Who was the hostage?", "Since when was Duncan a hostage?")
    assert memory.asked[-1] == "Since when was Duncan a hostage?"
    assert all(FACT not in message.content for call in llm.calls for message in call)
