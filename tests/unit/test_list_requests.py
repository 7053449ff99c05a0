"""Which requests ask for a list of every item of one kind (rag/list_requests.py): each way of asking,
and the requests for one value, for two kinds or for a list of other things, which are not."""

from __future__ import annotations

import pytest

from rag.list_requests import list_kind


@pytest.mark.parametrize(
    ("request_text", "kind"),
    [
        ("jot down all the dates and deadlines in the lease", "dates"),
        ("Can you pull out every figure in this agreement?", "figures"),
        ("Qui est cité dans ce document ? Personnes, organismes, lieux.", "names"),
        # the kind's plural, asked for by a question word or a verb, without an all-word
        ("Which thresholds does the safety sheet define?", "figures"),
        ("what are the renewal fees in the tariff", "figures"),
        ("Who were the members of the board, per the minutes?", "names"),
        ("Quelles sociétés le rapport cite-t-il ?", "names"),
        # the plural as the request itself, and words that are a list by meaning
        ("penalty amounts in the contract?", "figures"),
        ("chronology of the outage, from the postmortem", "dates"),
        # "when" asked of several things
        ("When were the various editions of the standard printed?", "dates"),
        # two kinds' words, one of them asked for
        ("What size limits does the section on packages give?", "figures"),
        # an all-word right before the kind wins over a heading's words
        ("List every number in the size limitations section.", "figures"),
        ("Give me all of last year's figures.", "figures"),  # a time, not the last figure
        ("¿En qué años se publicaron los artículos citados?", "dates"),
    ],
)
def test_a_request_for_every_item_of_a_kind_is_recognised(request_text: str, kind: str) -> None:
    assert list_kind(request_text) == kind


@pytest.mark.parametrize(
    "request_text",
    [
        "When does the lease start?",  # one date
        "Who signed the lease?",  # one person
        "How many employees are named in the appendix?",  # a count
        "What is the highest fee in the tariff?",  # an extreme
        "What are the four modules that make up the kit?",  # a set of a given size
        "Give me one date from the minutes.",
        "What page number is printed on the price list?",  # "list" as a noun
        "Are all the dates in the plan consistent?",  # yes/no
        "List every deadline and every fee in the tender.",  # two kinds: the model writes it
        "give me the dates and the prices in the quote",
        "What limits or caveats does the first chapter mention?",  # a list of another kind of thing
        "What did various countries request of the council?",  # the plural is who asked, not what is asked
        "Summarise the lease in 3 bullets.",
        "Compare the vendors' proposals.",  # a task on the whole document, not a list
        "Summarise what the participants said.",
        "What do participants need to bring to the workshop?",
        "What limits the battery's lifetime?",  # "limits" is the verb
        "How often is the report filed each year?",  # "each year" is how often
        "¿Son todas las fechas coherentes?",
        "Enumera los pasos para instalarlo.",  # a list of steps
    ],
)
def test_a_request_for_one_value_two_kinds_or_other_things_is_not(request_text: str) -> None:
    assert list_kind(request_text) is None
