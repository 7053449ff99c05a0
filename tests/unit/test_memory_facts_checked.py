"""The check on what the memory model wrote: a statement is kept only when it is a third-person line
about the user or the company that names nothing the message did not say."""

from __future__ import annotations

import pytest

from core.schemas import MemoryFact
from memory.extractor import FACTS_SCHEMA, SYSTEM_PROMPT, FirstPerson, Rejected, checked, restate, system_prompt
from tests.recording_llm import RecordingLLM


def fact(statement: str, target: str = "USER") -> MemoryFact:
    return MemoryFact(target=target, statement=statement)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("message", "made", "kept"),
    [
        (
            "i work nights at the depot",
            fact("the user works nights at the depot"),
            fact("The user works nights at the depot."),
        ),
        # The subject decides the file when the model filed it elsewhere.
        (
            "we bill clients monthly",
            fact("The company bills clients monthly.", "USER"),
            fact("The company bills clients monthly.", "COMPANY"),
        ),
        (
            "Orvik Tools ships from Bergen.",
            fact("Orvik Tools ships from Bergen.", "COMPANY"),
            fact("Orvik Tools ships from Bergen.", "COMPANY"),
        ),
        ("Ich wohne in Graz.", fact("Der Nutzer wohnt in Graz."), fact("Der Nutzer wohnt in Graz.")),
        # A fact said beside a question is kept, before or after it.
        (
            "I drive an EV — where can I charge it at the depot?",
            fact("The user drives an EV."),
            fact("The user drives an EV."),
        ),
        (
            "who signs off expenses? I'm the Kestrel project's finance lead",
            fact("The user is the Kestrel project's finance lead."),
            fact("The user is the Kestrel project's finance lead."),
        ),
    ],
)
def test_a_faithful_statement_is_kept_tidied(message: str, made: MemoryFact, kept: MemoryFact) -> None:
    assert checked(made, message) == kept


@pytest.mark.parametrize(
    ("message", "made", "reason"),
    [
        ("I'm on the night shift.", fact("The user works 12 hours on the night shift."), "did not say (12)"),
        ("I love pizza.", fact("The user is a data engineer at Acme."), "did not say (acme)"),
        ("I run the help desk.", fact("I run the help desk."), "not a third-person statement"),
        ("Our CRM is Pipedrive.", fact("The company's CRM is Pipedrive, we said.", "COMPANY"), "not a third-person"),
        ("Nice weather today.", fact("The weather is nice today."), "not about you or your company"),
        ("Please keep it short.", fact("Please keep it short."), "not about you or your company"),
        ("my pin is 4455", fact("The user's PIN is 4455."), "it holds a PIN"),
        ("hello", fact("  "), "empty statement"),
        ("Is our VPN split-tunnel?", fact("The company's VPN is split-tunnel.", "COMPANY"), "asks, not what it says"),
        ("We ship on Fridays - do refunds go out then too?", fact("Refunds go out on Fridays.", "COMPANY"), "asks"),
        # An earlier clause of a question that opens like one, a question typed without its mark, a condition.
        ("How long is our warranty, and who fixes it?", fact("The company has a warranty.", "COMPANY"), "asks"),
        ("where do i submit my timesheet", fact("The user submits a timesheet."), "asks"),
        ("If I switch to the Oslo team, does my salary change?", fact("The user switches to the Oslo team."), "asks"),
        ("Falls wir Rust einführen, wer schult uns?", fact("Das Unternehmen führt Rust ein.", "COMPANY"), "asks"),
    ],
)
def test_an_unfaithful_or_misformed_statement_is_rejected(message: str, made: MemoryFact, reason: str) -> None:
    with pytest.raises(Rejected, match=reason.replace("(", r"\(").replace(")", r"\)")):
        checked(made, message)


def test_the_schema_asks_for_what_the_fact_model_reads() -> None:
    item = FACTS_SCHEMA["properties"]["facts"]["items"]
    assert set(item["required"]) == set(MemoryFact.model_fields)
    assert item["properties"]["target"]["enum"] == ["USER", "COMPANY"]


@pytest.mark.parametrize(
    ("lang", "message", "made", "kept"),
    [
        ("es", "Trabajo en la oficina de Sevilla.", fact("el usuario trabaja en la oficina de Sevilla"), "USER"),
        ("it", "La nostra sede è a Torino.", fact("L'azienda ha sede a Torino.", "USER"), "COMPANY"),
        ("fr", "Nous payons à 30 jours.", fact("L'entreprise paie à 30 jours.", "COMPANY"), "COMPANY"),
        # Another language's pronoun is an English word here: "EU" is not Portuguese "eu" in an English line.
        ("en", "We file in every EU country.", fact("The company files in every EU country.", "COMPANY"), "COMPANY"),
    ],
)
def test_a_statement_in_the_message_language_is_kept_in_its_file(
    lang: str, message: str, made: MemoryFact, kept: str
) -> None:
    assert checked(made, message, lang).target == kept


@pytest.mark.parametrize(
    ("lang", "message", "made"),
    [
        ("es", "Mi jefe es Pablo.", fact("El jefe de mi equipo es Pablo.")),
        ("it", "Il mio capo è Luca.", fact("L'utente dice: il mio capo è Luca.")),
        ("nl", "Ik werk in Utrecht.", fact("De gebruiker zegt: ik werk in Utrecht.")),
    ],
)
def test_a_first_person_word_of_the_message_language_is_caught(lang: str, message: str, made: MemoryFact) -> None:
    with pytest.raises(FirstPerson):
        checked(made, message, lang)


def test_a_line_that_names_the_user_after_its_verb_is_about_the_user() -> None:
    kept = checked(fact("Marit Olsen is the user's name."), "call me Marit, Marit Olsen", "en")
    assert kept.statement == "Marit Olsen is the user's name." and kept.target == "USER"


def test_a_name_put_in_the_plural_was_said() -> None:
    kept = checked(fact("The company closes early on Fridays.", "COMPANY"), "we close early every friday", "en")
    assert kept.statement == "The company closes early on Fridays."
    with pytest.raises(Rejected, match="did not say"):
        checked(fact("The company closes early on Fridays.", "COMPANY"), "we close early on some days", "en")


def test_us_is_first_person_and_the_us_is_a_country() -> None:
    with pytest.raises(FirstPerson):
        checked(fact("Interns get 20 days of leave with us.", "COMPANY"), "interns get 20 days of leave with us", "en")
    kept = checked(fact("The company's US office opens at 8.", "COMPANY"), "our US office opens at 8", "en")
    assert kept.statement == "The company's US office opens at 8."


def test_the_prompt_names_the_message_language_and_its_subjects_and_english_stays_bare() -> None:
    assert system_prompt("en") == SYSTEM_PROMPT
    assert system_prompt("ja") == SYSTEM_PROMPT  # no subjects known for it: English lines
    french = system_prompt("fr")
    assert french.startswith(SYSTEM_PROMPT)
    assert "French" in french and "L'utilisateur" in french and "L'entreprise" in french


def test_a_statement_copied_in_its_own_language_is_caught_whatever_the_hint() -> None:
    copied = fact("Wir haben unseren Hauptsitz in Stuttgart.", "COMPANY")
    with pytest.raises(FirstPerson):
        checked(copied, "Wir haben unseren Hauptsitz in Stuttgart.", "en")


@pytest.mark.parametrize(
    ("message", "made"),
    [
        ("As a night nurse, what does the policy say about breaks?", fact("The user is a night nurse.")),
        ("We ship on Fridays - do refunds go out then too?", fact("The company ships on Fridays.", "COMPANY")),
        ("En tant qu'infirmier, que dit la politique sur les gardes ?", fact("L'utilisateur est infirmier.")),
    ],
)
def test_a_fact_said_before_a_question_is_kept(message: str, made: MemoryFact) -> None:
    assert checked(made, message).statement == made.statement


def test_a_company_fact_of_a_we_message_may_name_the_company_s_thing_as_subject() -> None:
    made = fact("The support desk is staffed 8:00-18:00 CET on weekdays.", "COMPANY")
    assert checked(made, "Our support desk is staffed 8:00-18:00 CET on weekdays.").target == "COMPANY"
    with pytest.raises(Rejected, match="not about you or your company"):
        checked(
            fact("The support desk is staffed 8:00-18:00 CET.", "COMPANY"),
            "The support desk is staffed 8:00-18:00 CET.",
        )


def test_a_first_person_statement_is_restated_by_the_model_and_must_keep_every_term() -> None:
    copied = fact("Every Thursday I run the stock count.")
    restated = restate(RecordingLLM('{"statement": "The user runs the stock count every Thursday."}'), copied)
    assert checked(restated, "Every Thursday I run the stock count.").statement == restated.statement
    with pytest.raises(FirstPerson, match="lost: everi, thursday"):
        restate(RecordingLLM('{"statement": "The user runs the stock count."}'), copied)
    with pytest.raises(FirstPerson):
        restate(RecordingLLM("not json"), copied)
    llm = RecordingLLM('{"statement": "Das Unternehmen schließt das Lager samstags."}')
    assert restate(llm, fact("Wir schließen das Lager samstags.", "COMPANY"), "de").target == "COMPANY"
    assert '"Das Unternehmen"' in llm.calls[0][0].content  # the language's own subjects


def test_a_company_line_may_start_with_the_company_s_name_but_not_with_any_capitalised_word() -> None:
    named = fact("Kovac Logistics invoices customers monthly.", "COMPANY")
    assert checked(named, "Kovac Logistics invoices customers monthly.").target == "COMPANY"
    with pytest.raises(Rejected, match="not about you or your company"):
        checked(
            fact("There's a plan to move the warehouse to Ghent.", "COMPANY"),
            "There's a plan to move the warehouse to Ghent.",
        )
