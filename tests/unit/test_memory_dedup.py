"""Dedup against existing entries: normalized text, embedding similarity (the real packaged
embedder), and fact slots that hold one value at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings, get_settings
from memory.dedup import canonical_times, compare
from providers.embedder import Embedder


@pytest.fixture(scope="module")
def embed():
    return Embedder(get_settings(home=Path("/nonexistent-home-unused"))).embed


ROLE = "User is a Project Finance Analyst."
MEETINGS = "Company holds team meetings every Friday at 10 AM."


@pytest.mark.parametrize(
    ("new", "existing", "action", "match"),
    [
        ("User is a Project Finance Analyst.", [ROLE], "duplicate", ROLE),
        ("user is a project-finance analyst", [ROLE], "duplicate", ROLE),
        ("User works as a project finance analyst.", [ROLE], "duplicate", ROLE),
        ("Company holds team meetings on Fridays at 10 AM.", [MEETINGS], "duplicate", MEETINGS),
        ("Company holds team meetings every Thursday at 9 AM.", [MEETINGS], "replace", MEETINGS),
        ("User moved to the risk team.", [ROLE, "User lives in Lisbon."], "replace", ROLE),
        ("User lives in Porto.", [ROLE, "User lives in Lisbon."], "replace", "User lives in Lisbon."),
        ("User works in the finance team.", [ROLE], "add", None),
        ("User prefers weekly summaries on Mondays.", [ROLE, "User lives in Lisbon."], "add", None),
        ("Company uses GCP.", [], "add", None),
        # The extractor's form ("The user …") is read by the same slots.
        ("The user is based in Oslo.", ["The user is based in Lyon.", ROLE], "replace", "The user is based in Lyon."),
        (
            "The user moved to the Oslo office.",
            ["The user works in the Lyon office."],
            "replace",
            "The user works in the Lyon office.",
        ),
        ("The user's name is Dana.", ["The user is based in Lyon."], "add", None),
        # One manager at a time, however unlike the two names read.
        (
            "The user now reports to Ines Marchetti.",
            ["The user's manager is Bo Lindqvist.", "The user is based in Lyon."],
            "replace",
            "The user's manager is Bo Lindqvist.",
        ),
        ("The user manages a team of 12.", ["The user reports to Bo Lindqvist."], "add", None),
        (
            "The user's job title is Buyer.",
            ["The user is a senior analyst.", "The user lives in Lisbon."],
            "replace",
            "The user is a senior analyst.",
        ),
    ],
)
def test_compare(embed, new: str, existing: list[str], action: str, match: str | None) -> None:
    result = compare(new, existing, embed, Settings.model_fields["memory_related_similarity"].default)
    assert (result.action, result.match) == (action, match)


def test_clock_times_are_read_on_the_24_hour_clock() -> None:
    assert canonical_times("closes at 5 pm, opens at 9.30am and 12 a.m.") == "closes at 17:00, opens at 09:30 and 00:00"
    assert canonical_times("Room 5 and 10 people, pm notes") == "Room 5 and 10 people, pm notes"


def test_a_time_said_on_the_other_clock_is_a_repeat(embed) -> None:  # type: ignore[no-untyped-def]
    stored = "The company's warehouse closes at 6 pm on Saturdays."
    result = compare("The company's warehouse closes at 18:00 on Saturdays.", [stored], embed, 0.75)
    assert (result.action, result.match) == ("duplicate", stored)
