"""Which questions carry the memory lines into their prompt: a question about the user or their company
(a first-person word of English or of its language, or close in meaning to a line), not one about a
document's people and figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.fact_gate import GateWeights
from memory.markdown_store import memory_files
from memory.memory import Memory
from memory.memory_log import MemoryLog
from memory.preference_gate import PREFERENCE_WEIGHTS
from memory.relevance import speaks_of_self
from memory.sensitive_gate import MemoryGates


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("What's my role again?", "en"),
        ("given our headcount, do we have to file?", "en"),
        ("Remind me of the payment terms", "en"),
        ("I’m new here, which form applies?", "en"),
        ("Quel est notre délai de paiement ?", "fr"),
        ("j'ai besoin du numéro de fax", "fr"),
        ("Wann endet unser Geschäftsjahr?", "de"),
        ("¿Cuál es mi cargo?", "es"),
        ("Qual è la nostra sede?", "it"),
        ("Wie is mijn manager?", "nl"),
    ],
)
def test_a_first_person_word_of_english_or_the_question_language_speaks_of_self(question: str, lang: str) -> None:
    assert speaks_of_self(question, lang)


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("How much did Fernando Luis Lorenzo contribute?", "en"),
        ("How many employees were affected by Toyota's closure in Torrance?", "en"),
        ("Who is Michelle Poirier?", "en"),  # "mi…" is no word of its own
        ("Combien d'oppositions ont été reçues ?", "fr"),
        ("Wer hat das Paket geschrieben?", "de"),
        ("Item 10 of the form, in the 2019 edition", "en"),
    ],
)
def test_a_question_about_others_does_not_speak_of_self(question: str, lang: str) -> None:
    assert not speaks_of_self(question, lang)


def unit(*values: float) -> list[float]:
    """A vector of MiniLM's size (the preference gate reads it) in the first three directions."""
    return [*values, *[0.0] * (384 - len(values))]


# Three directions: the user's office, the company's payment term, anything else.
VECTORS = {
    "The user works from the Lyon office.": unit(1, 0, 0),
    "The company's payment term is net 30.": unit(0, 1, 0),
    "Which city does the user work in?": unit(0.9, 0.1, 0.1),
    "How much did Fernando Luis Lorenzo contribute?": unit(0.1, 0.1, 1),
    "What's my payment term?": unit(0, 0.2, 1),
    "What's the user's payment term?": unit(0, 0.2, 1),
}


# A wish: the unit vector the preference gate's weights point along (its probability is near 1).
_WISH_WEIGHTS = GateWeights.load(PREFERENCE_WEIGHTS).weights
VECTORS["The user prefers short answers."] = list(_WISH_WEIGHTS / np.linalg.norm(_WISH_WEIGHTS))


def fake_embed(texts: list[str]) -> list[list[float]]:
    return [VECTORS[text] for text in texts]


def no_model() -> None:
    raise AssertionError("choosing the memory lines needs no model")


def memory_with_lines(folder: Path) -> Memory:
    gates = MemoryGates(0.4, 0.8, {}, 0.2, {}, 0.4)
    memory = Memory(
        memory_files(folder),
        MemoryLog(folder / "log.sqlite"),
        no_model,  # type: ignore[arg-type]
        fake_embed,
        200,
        0.75,
        gates,
        0.5,
        0.45,
    )
    memory.files["USER"].add("The user works from the Lyon office.")
    memory.files["COMPANY"].add("The company's payment term is net 30.")
    return memory


def test_a_question_about_a_document_gets_no_memory_lines(tmp_path: Path) -> None:
    assert not memory_with_lines(tmp_path).context_for("How much did Fernando Luis Lorenzo contribute?", "en")


def test_a_first_person_question_gets_every_line_however_far_in_meaning(tmp_path: Path) -> None:
    facts = memory_with_lines(tmp_path).context_for("What's my payment term?", "en")
    assert facts.user == ["The user works from the Lyon office."]
    assert facts.company == ["The company's payment term is net 30."]


def test_a_question_close_to_a_line_gets_the_lines_without_a_first_person_word(tmp_path: Path) -> None:
    facts = memory_with_lines(tmp_path).context_for("Which city does the user work in?", "en")
    assert facts.user == ["The user works from the Lyon office."]


def test_a_standing_wish_goes_with_every_question(tmp_path: Path) -> None:
    memory = memory_with_lines(tmp_path)
    memory.files["USER"].add("The user prefers short answers.")
    facts = memory.context_for("How much did Fernando Luis Lorenzo contribute?", "en")
    assert facts.user == ["The user prefers short answers."] and facts.company == []
    facts = memory.context_for("What's my payment term?", "en")
    assert len(facts.user) == 2 and facts.company == ["The company's payment term is net 30."]


def test_a_question_in_a_language_without_a_word_table_keeps_every_line(tmp_path: Path) -> None:
    facts = memory_with_lines(tmp_path).context_for("How much did Fernando Luis Lorenzo contribute?", "pl")
    assert facts.user and facts.company
