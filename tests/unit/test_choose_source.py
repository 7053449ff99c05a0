"""ChooseSource: which questions are measured against memory, and when memory answers instead of the
passages. The memory is a stand-in here (its closeness is the component's input); the real one is in
tests/e2e/test_memory.py."""

from __future__ import annotations

from core.schemas import MemoryFacts
from memory.relevance import speaks_of_self
from rag.stages import ChooseSource

FACTS = MemoryFacts(user=["The user is the site safety officer."])


class _Memory:
    """Every question is 0.6 from the facts; first persons as the real memory reads them."""

    def closeness(self, question: str, facts: MemoryFacts) -> float:
        return 0.6

    def speaks_of_self(self, question: str, lang: str) -> bool:
        return speaks_of_self(question, lang)


def _source() -> ChooseSource:
    return ChooseSource(_Memory(), memory_min_similarity=0.5)  # type: ignore[arg-type]


def test_a_question_in_the_first_person_of_its_own_language_is_measured_against_memory() -> None:
    source = _source()
    for question, lang in [
        ("What is my role?", "en"),
        ("¿Cuál es mi puesto?", "es"),
        ("Quel est notre délai de paiement ?", "fr"),
        ("Wo arbeite ich?", "de"),
    ]:
        closeness = source.memory_closeness(question, FACTS, lang)
        assert closeness == 0.6 and source.personal(closeness), question


def test_a_question_about_someone_else_or_without_memory_is_not() -> None:
    source = _source()
    assert source.memory_closeness("Who chairs the board of the US subsidiary?", FACTS, "en") == 0.0
    assert source.memory_closeness("¿Quién firmó el acta?", FACTS, "es") == 0.0
    assert source.memory_closeness("What is my role?", MemoryFacts(), "en") == 0.0
    assert ChooseSource(None, 0.5).memory_closeness("What is my role?", FACTS, "en") == 0.0
