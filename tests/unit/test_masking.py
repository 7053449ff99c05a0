"""Masking: personal data and secrets become placeholders; ordinary figures stay."""

from __future__ import annotations

import pytest

from core.masking import mask, mask_data


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Mail anna.schmidt@example.co.uk today", "Mail [EMAIL] today"),
        ("call +49 30 1234 5678 now", "call [PHONE] now"),
        ("call (555) 123-4567 or 555.123.4567", "call [PHONE] or [PHONE]"),
        ("office 0171 2345678, desk 123-4567", "office [PHONE], desk [PHONE]"),
        ("mobile 0044 7700 900123", "mobile [PHONE]"),
        ("server 192.168.1.20:8080 is down", "server [IP] is down"),
        ("host fe80::1ff:fe23:4567:890a and ::1", "host [IP] and [IP]"),
        ("card 4111 1111 1111 1111 expired", "card [CARD] expired"),
        ("card 4111-1111-1111-1112 (a typo) and 4111111111111111", "card [CARD] (a typo) and [CARD]"),
        ("my password is hunter2", "my password is [SECRET]"),
        # A named secret's value is masked to the end of its clause: a passphrase may hold spaces.
        ("the wifi passphrase is correct horse battery staple. Thanks!", "the wifi passphrase is [SECRET]. Thanks!"),
        ("use sk-proj-AbCdEfGhIjKlMnOpQrSt1234 for the bot", "use [SECRET] for the bot"),
    ],
)
def test_personal_data_and_secrets_are_masked(text: str, masked: str) -> None:
    assert mask(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "Revenue was 8.15 million in Q2 2024 and 7.35 million in Q1.",
        "85,000 pallet positions, 640 people, founded in 1987.",
        "From 1066-1087, and again 2019 2020.",
        "Meetings on 2024-01-15 or 15.01.2024 at 10:30:00.",
        "Version v2.3 costs 12.5% more; pi is 3.14159; 4 900 000 units.",
        "Which systems does the policy ignore? Order 12345 ships Monday.",
    ],
)
def test_ordinary_figures_are_kept(text: str) -> None:
    assert mask(text) == text


def test_mask_data_masks_nested_text_but_keeps_ids() -> None:
    data = {"chunk_id": "5551234567", "snippet": "call 555-123-4567", "scores": {"dense": 0.5}, "list": ["a@b.io"]}
    assert mask_data(data, frozenset({"chunk_id"})) == {
        "chunk_id": "5551234567",
        "snippet": "call [PHONE]",
        "scores": {"dense": 0.5},
        "list": ["[EMAIL]"],
    }
