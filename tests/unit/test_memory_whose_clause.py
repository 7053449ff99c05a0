"""The memory graph files a line by the clause it restates (memory/speaker.py): a user line about the
company's clause, a subjectless line from a first-person clause. The real MiniLM gates; a stand-in
memory model that writes what the 1.5B wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.settings import get_settings
from memory.graph import MemoryGraph
from memory.markdown_store import memory_files
from memory.sensitive_gate import MemoryGates
from providers.embedder import Embedder
from providers.llm.base import ChatMessage
from tests.recording_llm import RecordingLLM


class ScriptedLLM(RecordingLLM):
    """Lists `facts`; restates a sentence as `restated`; judges any two lines a change."""

    def __init__(self, facts: list[tuple[str, str]], restated: str = "") -> None:
        super().__init__("")
        self.facts = facts
        self.restated = restated

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        self.calls.append(messages)
        properties = schema["properties"]
        if "facts" in properties:
            return json.dumps({"facts": [{"statement": s, "target": t} for t, s in self.facts]})
        if "relation" in properties:
            return json.dumps({"relation": "replaces"})
        return json.dumps({"statement": self.restated})


@pytest.fixture(scope="module")
def embed():  # type: ignore[no-untyped-def]
    return Embedder(get_settings()).embed


def run(embed, folder: Path, llm: ScriptedLLM, message: str, lang: str = "en"):  # type: ignore[no-untyped-def]
    gates = MemoryGates.from_settings(get_settings())
    return MemoryGraph(lambda: llm, embed, memory_files(folder), 0.75, gates, 0.5).run(message, lang)


def test_a_user_line_restating_the_company_s_clause_goes_to_the_company(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = "Je m'occupe des achats et nous livrons uniquement le mardi."
    llm = ScriptedLLM(
        [("USER", "L'utilisateur s'occupe des achats."), ("USER", "L'utilisateur livre uniquement le mardi.")]
    )
    writes = {(w.target, w.summary) for w in run(embed, tmp_path, llm, message, "fr").writes}
    assert writes == {
        ("USER", "L'utilisateur s'occupe des achats."),
        ("COMPANY", "L'entreprise livre uniquement le mardi."),
    }


def test_a_subjectless_line_is_restated_from_its_first_person_clause(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = "I run the Tilburg depot, our peak season is November"
    llm = ScriptedLLM(
        [("USER", "The user runs the Tilburg depot."), ("USER", "The peak season is November.")],
        restated="The company's peak season is November.",
    )
    writes = {(w.target, w.summary) for w in run(embed, tmp_path, llm, message).writes}
    assert writes == {
        ("USER", "The user runs the Tilburg depot."),
        ("COMPANY", "The company's peak season is November."),
    }
    restate_prompt = llm.calls[-1]
    assert restate_prompt[-1].content == "Sentence: our peak season is November"


def test_a_company_line_said_in_no_one_s_person_is_given_the_company_as_subject(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = "fyi the canteen is closed on public holidays"
    llm = ScriptedLLM(
        [("COMPANY", "The canteen is closed on public holidays.")],
        "The company's canteen is closed on public holidays.",
    )
    writes = [(w.target, w.summary) for w in run(embed, tmp_path, llm, message).writes]
    assert writes == [("COMPANY", "The company's canteen is closed on public holidays.")]
    assert llm.calls[-1][-1].content == "Statement: The canteen is closed on public holidays."


def test_a_rewrite_that_loses_a_term_or_a_user_line_without_a_subject_is_not_stored(embed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    message = "fyi the canteen is closed on public holidays"
    lossy = ScriptedLLM([("COMPANY", "The canteen is closed on public holidays.")], "The company's canteen is closed.")
    outcome = run(embed, tmp_path, lossy, message)
    assert outcome.writes == []
    assert "restated, it lost: holiday, public" in outcome.skipped[-1].reason
    nobody = ScriptedLLM(
        [("USER", "The canteen is closed on public holidays.")], "The user's canteen is closed on public holidays."
    )
    assert run(embed, tmp_path, nobody, message).writes == []
