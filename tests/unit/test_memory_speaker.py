"""Whose fact a line restates, read from the person of the message's clause (memory/speaker.py)."""

from __future__ import annotations

from core.schemas import MemoryFact
from memory.extractor import as_company
from memory.speaker import clauses, owner, source_clause


def test_a_conjunction_opens_a_clause_with_its_own_person() -> None:
    found = clauses("Ich leite den Einkauf und wir liefern nur dienstags aus.", "de")
    assert [(c.text, c.owner) for c in found] == [
        ("Ich leite den Einkauf", "USER"),
        ("wir liefern nur dienstags aus", "COMPANY"),
    ]


def test_the_first_first_person_word_names_the_owner() -> None:
    """ "our" after "I" is where the user sits, not who the clause is about."""
    assert [c.owner for c in clauses("I run payroll in our Porto office, our canteen closes at two", "en")] == [
        "USER",
        "COMPANY",
    ]


def test_a_clause_without_a_person_has_no_owner_and_a_question_is_marked() -> None:
    found = clauses("the car park is full again. Do we still pay for the shuttle?", "en")
    assert found[0].owner is None and not found[0].asked
    assert found[1].owner == "COMPANY" and found[1].asked


def test_a_user_line_about_the_company_clause_is_the_company_s() -> None:
    message = "Je gère la paie, et nous payons les salaires le 28 de chaque mois."
    assert owner("L'utilisateur paie les salaires le 28 de chaque mois.", message, "fr") == "COMPANY"
    assert owner("L'utilisateur gère la paie.", message, "fr") == "USER"


def test_a_name_taken_to_say_what_it_is_does_not_move_the_line() -> None:
    """The line names the tool the user's "it" stands for; the user's clause holds as much of it."""
    message = "We switched to Workday last spring and I'm the admin for it"
    assert owner("The user is the admin for Workday.", message, "en") is None
    assert owner("The user uses Workday for onboarding.", "I do onboarding, we use Workday", "en") == "COMPANY"


def test_no_owner_when_the_person_less_clauses_hold_more() -> None:
    message = "the printer on floor 3 jams a lot, we should call someone"
    assert owner("The user says the printer on floor 3 jams a lot.", message, "en") is None


def test_the_source_clause_is_the_one_holding_most_terms() -> None:
    message = "Random question, our warehouse in Tilburg ships Saturdays, does that matter?"
    clause = source_clause("The warehouse in Tilburg ships on Saturdays.", message, "en")
    assert clause is not None and clause.text == "our warehouse in Tilburg ships Saturdays"
    assert clause.owner == "COMPANY" and not clause.asked
    assert source_clause("Bananas are yellow.", message, "en") is None


def test_as_company_swaps_the_subject_in_the_line_s_language() -> None:
    assert as_company(MemoryFact(target="USER", statement="The user's fleet has 40 vans.")) == MemoryFact(
        target="COMPANY", statement="The company's fleet has 40 vans."
    )
    swapped = as_company(MemoryFact(target="USER", statement="L'utilisateur ferme le site en août."))
    assert swapped.statement == "L'entreprise ferme le site en août." and swapped.target == "COMPANY"
    other = MemoryFact(target="USER", statement="Ravi runs the night shift.")
    assert as_company(other) == other
