"""A question is compared with memory entries in their own third person as well as as asked."""

from __future__ import annotations

import pytest

from memory.memory import in_third_person


@pytest.mark.parametrize(
    ("question", "third"),
    [
        ("What is my role?", "What is the user's role?"),
        ("Where do I work?", "Where does the user work?"),
        ("Which tool do we deploy releases with?", "Which tool does the company deploy releases with?"),
        ("Am I on call this week?", "is the user on call this week?"),
        ("What are our payment terms?", "What are the company's payment terms?"),
        ("What does the lease say about insurance?", "What does the lease say about insurance?"),
    ],
)
def test_first_person_becomes_the_entries_subjects(question: str, third: str) -> None:
    assert in_third_person(question) == third
