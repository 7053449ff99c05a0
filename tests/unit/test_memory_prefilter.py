"""The rule-based screen: which sentences could state a fact, and about whom."""

from __future__ import annotations

import pytest

from memory.prefilter import screen


@pytest.mark.parametrize(
    ("message", "target"),
    [
        ("I'm a Project Finance Analyst.", "USER"),
        ("I prefer weekly summaries on Mondays.", "USER"),
        ("Every Monday morning I run a batch job that refreshes our data warehouse.", "USER"),
        ("Our company just migrated from AWS to GCP last quarter.", "COMPANY"),
        ("We hold team meetings every Friday at 10 AM.", "COMPANY"),
    ],
)
def test_statements_are_candidates_with_their_subject(message: str, target: str) -> None:
    result = screen(message)
    assert [s.target for s in result.statements] == [target]
    assert result.only_statements


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("Wow, the weather is really nice today.", "not about you or your company"),
        ("Hello!", "a greeting"),
        ("Thanks a lot", "a greeting"),
        ("What does the report say about revenue?", "a question or request, not a fact"),
        ("Can you summarise the policy", "a question or request, not a fact"),
        ("I'd like to know the Q2 revenue.", "a question or request, not a fact"),
        ("I think so.", "too vague to remember"),
        ("I'm tired today.", "about the moment, not a lasting fact"),
        ("I'm asking about the North region.", "a question or request, not a fact"),
    ],
)
def test_fluff_questions_and_requests_hold_no_candidate(message: str, reason: str) -> None:
    result = screen(message)
    assert result.statements == []
    assert result.skip_reason == reason


def test_a_fact_beside_a_question_is_a_candidate_but_the_message_still_asks() -> None:
    result = screen("When are expense reports due? I work in the finance team.")
    assert [s.text for s in result.statements] == ["I work in the finance team."]
    assert not result.only_statements
