"""The answerability check on the real 0.5B model: after the answer is written, the model is asked one
more token (does the evidence state the answer, or NONE?) and a model calibrated with it is scored
again; at the level's threshold the written answer is withheld, uncited."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import get_settings
from rag import answerability
from rag.answerability import CHECK_SIGNAL, Calibration
from rag.messages import REFUSAL_TEXT
from ragchat.application import open_session
from tests.fixtures import write_report_pdf

LEVELS = ("lenient", "balanced", "strict")


def calibration(check_threshold: float) -> Calibration:
    """Never refuses at the phrase line; after the check, score = sigmoid(P(NONE)) (0.5 to 0.73),
    refused at `check_threshold`."""
    checked = Calibration(
        model="test",
        weights={CHECK_SIGNAL: 1.0},
        means={CHECK_SIGNAL: 0.0},
        scales={CHECK_SIGNAL: 1.0},
        bias=0.0,
        thresholds=dict.fromkeys(LEVELS, check_threshold),
        rates={},
    )
    return Calibration(
        model="test",
        weights={},
        means={},
        scales={},
        bias=-30.0,
        thresholds=dict.fromkeys(LEVELS, 0.5),
        rates={},
        checked=checked,
    )


def ask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check_threshold: float, **settings: object):
    monkeypatch.setattr(answerability, "calibration_for", lambda label: calibration(check_threshold))
    session = open_session(get_settings(memory_enabled=False, **settings))
    assert session.ingest_paths([write_report_pdf(tmp_path / "report.pdf")])[0].status == "indexed"
    return session.ask("What was the Q2 revenue of the Westland region?")


def test_a_check_at_the_threshold_withholds_the_written_answer(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = ask(tmp_path, monkeypatch, check_threshold=0.0, answerability_check=True)
    assert answer.refused and answer.answer == REFUSAL_TEXT and answer.citations == []
    assert answer.withheld and "8.15" in answer.withheld  # what the model wrote, kept apart
    assert answer.abstention is not None and answer.abstention.signals is not None
    assert 0.0 <= answer.abstention.signals[CHECK_SIGNAL] <= 1.0
    assert answer.abstention.threshold == 0.0 and answer.abstention.calibrated
    assert answer.timings_ms["check_ms"] > 0


def test_below_the_threshold_the_checked_answer_stands_with_its_citations(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = ask(tmp_path, monkeypatch, check_threshold=1.0, answerability_check=True)
    assert not answer.refused and "8.15" in answer.answer and answer.citations
    assert answer.withheld is None
    assert answer.abstention is not None and CHECK_SIGNAL in (answer.abstention.signals or {})
    assert answer.abstention.score is not None and 0.5 <= answer.abstention.score < 1.0


def test_off_by_default_the_check_costs_no_call(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = ask(tmp_path, monkeypatch, check_threshold=0.0)
    assert not answer.refused and "8.15" in answer.answer
    assert "check_ms" not in answer.timings_ms
    assert answer.abstention is not None and CHECK_SIGNAL not in (answer.abstention.signals or {})
