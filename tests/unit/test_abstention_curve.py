"""A run re-decided at other strictness thresholds from its saved scores: a scored answer is refused
once its score reaches the threshold; a reply that was withheld (no passage held it) or a NONE stays
refused at every threshold."""

from __future__ import annotations

from core.schemas import AbstentionScore
from eval.abstention_curve import refused_at
from eval.results import QuestionResult


def result(score: float, refused: bool, withheld: bool = False, phrase: str = "1191") -> QuestionResult:
    scored = AbstentionScore(score=score, threshold=0.65, strictness="balanced", calibrated=True, phrase=phrase)
    return QuestionResult(
        id="q",
        question="When did the storm hit?",
        category="unanswerable",
        answerable=False,
        reference=None,
        answer="",
        search_query="When did the storm hit?",
        refused=refused,
        withheld=withheld,
        abstention=scored,
    )


def test_a_scored_answer_is_refused_once_its_score_reaches_the_threshold() -> None:
    answered = result(0.4, refused=False)
    assert [refused_at(answered, t) for t in (0.3, 0.4, 0.5)] == [True, True, False]


def test_a_withheld_reply_and_a_none_stay_refused_at_every_threshold() -> None:
    withheld = result(0.4, refused=True, withheld=True)
    none = result(0.1, refused=True, phrase="NONE")
    assert all(refused_at(q, t) for q in (withheld, none) for t in (0.0, 0.5, 0.99))
    refused_by_score = result(0.7, refused=True)  # at or above the 0.65 it ran at: answered above 0.7
    assert refused_at(refused_by_score, 0.6) and not refused_at(refused_by_score, 0.8)
