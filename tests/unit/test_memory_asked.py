"""What of a message is asked or supposed, and so never stored as a fact (memory/asked.py)."""

from __future__ import annotations

import pytest

from memory.asked import said_part


@pytest.mark.parametrize(
    ("message", "lang", "said"),
    [
        ("Which printers can I use on the third floor?", "en", ""),
        ("how do we request a new mailbox", "en", ""),  # no question mark
        ("is my access card still valid", "en", ""),
        ("What's our VAT number, and where is it printed?", "en", ""),
        ("Unless I hear back, should I send the invoice?", "en", ""),
        ("Quand est-ce que la cantine ferme ?", "fr", ""),
        ("Se cambio ufficio, chi mi avvisa?", "it", ""),
        ("I handle the Nordic accounts, so which price list applies?", "en", "I handle the Nordic accounts"),
        ("Our canteen closes at 3. Can I eat at my desk?", "en", "Our canteen closes at 3"),
        ("Wir nutzen Slack – wo finde ich den Kanal?", "de", "Wir nutzen Slack"),
        ("When I started here we had nine staff.", "en", "When I started here we had nine staff"),
    ],
)
def test_only_what_the_message_states_is_left(message: str, lang: str, said: str) -> None:
    assert said_part(message, lang).strip() == said


@pytest.mark.parametrize(
    ("message", "lang", "said"),
    [
        ("Please list the open actions from my last one-to-one.", "en", ""),
        ("Describe our escalation process for a new starter", "en", ""),
        ("Résume-moi notre politique de télétravail.", "fr", ""),
        ("Draft a reply to my landlord about the deposit", "en", ""),
        ("Email this tax form to my accountant.", "en", ""),
        ("Écris un mail à notre comptable.", "fr", ""),
        ("We send invoices on the first of the month.", "en", "We send invoices on the first of the month"),
        ("Email is our main channel with clients.", "en", "Email is our main channel with clients"),
        ("Write-offs are approved by the CFO.", "en", "Write-offs are approved by the CFO"),
        ("Compute costs are billed monthly.", "en", "Compute costs are billed monthly"),
        ("Book us a room for the offsite, thanks", "en", ""),
        ("just forward my itinerary to the travel desk", "en", ""),
        ("I'd like you to prepare a handover note for my replacement.", "en", ""),
        ("Plan reviews are held every quarter at our firm.", "en", "Plan reviews are held every quarter at our firm"),
        ("Mándame el acta de la reunión, por favor.", "es", ""),
        ("Prenotami un taxi per le otto.", "it", ""),
        ("Reserveer een tafel voor ons om zeven uur.", "nl", ""),
        ("Our rate is 12.5% and the cap is 2,400 euros.", "en", "Our rate is 12.5% and the cap is 2,400 euros"),
        ("Je prépare un doctorat à Lyon.", "fr", "Je prépare un doctorat à Lyon"),
        ("I told you I work in Lyon now.", "en", "I told you I work in Lyon now"),
        ("Work starts at 8am for me.", "en", "Work starts at 8am for me"),
        ("Order 12345 is mine.", "en", "Order 12345 is mine"),
        ("Faz três anos que moro em Lisboa.", "pt", "Faz três anos que moro em Lisboa"),
        ("Sette anni fa mi sono trasferito a Roma.", "it", "Sette anni fa mi sono trasferito a Roma"),
        ("Remind me that my passport expires in May.", "en", "Remind me that my passport expires in May"),
        ("Make a note that I'm hard of hearing.", "en", "Make a note that I'm hard of hearing"),
        ("Summarise that last answer in two bullets.", "en", ""),
        ("Work out the total interest on the loan", "en", ""),
        ("Send me the file, thank you.", "en", ""),
        ("Mandami il file, per favore.", "it", ""),
        ("Remember that I'm allergic to nuts.", "en", "Remember that I'm allergic to nuts"),
        ("Note that our office moved to Dock Road.", "en", "Note that our office moved to Dock Road"),
    ],
)
def test_a_request_to_the_assistant_is_asked_and_a_request_to_remember_is_said(
    message: str, lang: str, said: str
) -> None:
    assert said_part(message, lang).strip() == said


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("show me the risks first from now on", "en"),
        ("Never give me more than five bullets.", "en"),
        ("Donne-moi désormais les chiffres en euros.", "fr"),
        ("Zeig mir künftig zuerst die Quelle.", "de"),
    ],
)
def test_a_request_made_standing_by_an_adverb_of_time_is_said(message: str, lang: str) -> None:
    assert said_part(message, lang).strip() == message.rstrip(".")


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("could you remember that I'm on the Bristol rota", "en"),
        ("Can you note that our VAT quarter ends in May?", "en"),
        ("Peux-tu retenir que je suis daltonien ?", "fr"),
    ],
)
def test_a_question_asking_to_keep_something_is_said(message: str, lang: str) -> None:
    assert said_part(message, lang).strip() == message.rstrip("?").strip()
