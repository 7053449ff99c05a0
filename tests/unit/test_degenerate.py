"""rag/degenerate.py: the shapes of a reply that is not an answer, and no false alarm on the answers
the real models gave in the committed eval reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.degenerate import degeneration

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("[1] [2][3]", "no words"),
        ("Die Kosten betragen [1] [2][3] [4]" + " " * 60 + "[12", "mostly whitespace"),
        ("Los costes [1]. (2). [3]. (3). [1].", "citation markers without text"),
        ("the the the the the the the the the the the the the [1]", "the same words repeated"),
    ],
)
def test_degenerate_shapes(reply: str, reason: str) -> None:
    assert degeneration(reply).reason == reason


@pytest.mark.parametrize(
    "reply",
    [
        "The harbour opened in 1871 [1]. Its first master was Ada Lind [1][2].",
        "Le projet ajoute 43 logements [1].",
        "- Revenue grew 5% [1]\n- Costs fell [2]\n- Staff: 640 [1]",
        "",  # empty: the pipeline's own "said nothing" case, not judged here
    ],
)
def test_answers_are_not_degenerate(reply: str) -> None:
    assert degeneration(reply).reason is None


def test_no_answer_of_the_committed_eval_reports_is_flagged() -> None:
    answers = {
        q["answer"]
        for report in REPORTS.glob("**/eval.json")
        for q in json.loads(report.read_text(encoding="utf-8"))["questions"]
    }
    assert len(answers) >= 100
    assert [a for a in answers if degeneration(a).reason] == []
