"""Turning a statement into the line that is written: the model's summary, checked, or the rules'."""

from __future__ import annotations

import pytest

from core.schemas import MemoryDecision
from memory.analyzer import DECISION_SCHEMA, Rejected, analyze, checked_summary
from memory.prefilter import Statement
from memory.third_person import third_person
from tests.recording_llm import RecordingLLM


@pytest.mark.parametrize(
    ("statement", "target", "line"),
    [
        ("I'm a Project Finance Analyst.", "USER", "User is a Project Finance Analyst."),
        (
            "Every Monday morning I run a batch job that refreshes our data warehouse.",
            "USER",
            "Every Monday morning User runs a batch job that refreshes the company's data warehouse.",
        ),
        (
            "We hold team meetings every Friday at 10 AM.",
            "COMPANY",
            "Company holds team meetings every Friday at 10 AM.",
        ),
        ("Our company just migrated from AWS to GCP.", "COMPANY", "Company just migrated from AWS to GCP."),
        ("Our team uses Jira for tickets.", "COMPANY", "Company's team uses Jira for tickets."),
        ("My manager is Anna Schmidt.", "USER", "User's manager is Anna Schmidt."),
        ("I usually work from home on Wednesdays.", "USER", "User usually works from home on Wednesdays."),
        ("I teach my students on Fridays", "USER", "User teaches their students on Fridays."),
        ("We're based in Oslo.", "COMPANY", "Company is based in Oslo."),
    ],
)
def test_third_person_rewrite(statement: str, target: str, line: str) -> None:
    assert third_person(statement, target) == line  # type: ignore[arg-type]


def decision(summary: str, confidence: float = 0.9, target: str = "USER", write: bool = True) -> MemoryDecision:
    return MemoryDecision(should_write=write, target=target, summary=summary, confidence=confidence)  # type: ignore[arg-type]


USER_FACT = Statement(text="My manager is Anna Schmidt.", target="USER")


def test_a_faithful_model_summary_is_kept() -> None:
    line, how = checked_summary(decision("The user's manager is Anna Schmidt"), USER_FACT, 0.7)
    assert (line, how) == ("User's manager is Anna Schmidt.", "model")


def test_a_summary_that_drops_what_the_user_said_is_replaced_by_the_rules() -> None:
    line, how = checked_summary(decision("User is Anna Schmidt."), USER_FACT, 0.7)
    assert (line, how) == ("User's manager is Anna Schmidt.", "rules")


def test_the_target_comes_from_the_statement_not_the_model() -> None:
    statement = Statement(text="We hold team meetings every Friday at 10 AM.", target="COMPANY")
    line, _ = checked_summary(decision("User holds team meetings every Friday at 10 AM."), statement, 0.7)
    assert line.startswith("Company holds")


@pytest.mark.parametrize(
    ("made", "reason"),
    [
        (decision("User's manager is Anna Schmidt.", confidence=0.5), "confidence 0.50 is below 0.70"),
        (decision("", write=False, target="none"), "the memory model found no lasting fact"),
        (decision("User's manager is Anna Schmidt, the CFO of Acme in Berlin."), "adds words"),
    ],
)
def test_low_confidence_nothing_and_invented_words_are_rejected(made: MemoryDecision, reason: str) -> None:
    with pytest.raises(Rejected, match=reason):
        checked_summary(made, USER_FACT, 0.7)


def test_analyze_asks_for_the_schema_and_validates_the_reply() -> None:
    llm = RecordingLLM('{"should_write": true, "target": "USER", "summary": "User is a nurse.", "confidence": 0.9}')
    made = analyze(llm, Statement(text="I'm a nurse.", target="USER"))
    assert made.summary == "User is a nurse." and made.confidence == 0.9
    assert llm.calls[0][-1].content == "Message: I'm a nurse."
    assert set(DECISION_SCHEMA["required"]) == set(MemoryDecision.model_fields)


def test_a_broken_reply_is_rejected_not_raised() -> None:
    with pytest.raises(Rejected, match="not a valid decision"):
        analyze(RecordingLLM('{"should_write": "maybe"'), Statement(text="I'm a nurse.", target="USER"))
