"""The abstention score's signals: a question in another language than every passage is not held
against its answer for sharing no words with them."""

from __future__ import annotations

from rag.answer_format import Reply
from rag.answerability import Calibration, signals
from tests.chunks import text_hit

FRENCH = text_hit("La séance est levée à 20 h 15.", source="pv.pdf", page=2, lang="fr")
QUESTION = "At what time was the meeting closed?"


def test_question_terms_count_only_over_passages_in_the_question_language() -> None:
    reply = Reply(phrase="20 h 15", p_none=0.05, phrase_logprobs=[-0.1, -0.2])
    across = signals(reply, QUESTION, [FRENCH], best_dense=0.3, question_lang="en")
    assert across is not None and "question_missing" not in across
    english = text_hit("The meeting was closed at 8.15 pm.", source="minutes.pdf", page=2)
    same = signals(reply, QUESTION, [FRENCH, english], best_dense=0.3, question_lang="en")
    assert same is not None and 0.0 <= same["question_missing"] < 1.0


def test_an_absent_signal_counts_as_its_mean() -> None:
    calibration = Calibration(
        model="m",
        weights={"p_none": 1.0, "question_missing": 2.0},
        means={"p_none": 0.2, "question_missing": 0.3},
        scales={"p_none": 0.1, "question_missing": 0.1},
        bias=0.0,
        thresholds={"lenient": 0.9, "balanced": 0.7, "strict": 0.5},
        rates={},
    )
    assert calibration.score({"p_none": 0.2}) == calibration.score({"p_none": 0.2, "question_missing": 0.3}) == 0.5
    assert calibration.score({"p_none": 0.2, "question_missing": 0.9}) > 0.99
