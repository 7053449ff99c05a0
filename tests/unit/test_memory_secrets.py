"""The secret detector vetoes a memory write whatever the model decided."""

from __future__ import annotations

import pytest

from core.secrets import find_secret


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("my password is hunter2", "a password"),
        ("Mein Passwort für das HR-Portal ist Sommer2024!", "a password"),
        ("Mon mot de passe est chat123", "a password"),
        ("La contraseña del wifi es Casa2020", "a password"),
        ("Il mio PIN è 4521", "a PIN"),
        ("Mijn wachtwoord is Fiets77", "a password"),
        ("My API key is abc", "an API key"),
        ("the wifi passphrase: correct horse battery staple", "a passphrase"),
        ("Our PIN code is 4921", "a PIN code"),
        ("use sk-proj-AbCdEfGhIjKlMnOpQrStUv123 for the bot", "an API key"),
        ("AKIAIOSFODNN7EXAMPLE is the deploy key id", "an AWS access key"),
        ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token"),
        ("Authorization: Bearer abcdefghijklmnop.qrstuv", "a bearer token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", None),
        ("My card is 4111 1111 1111 1111", "a card number"),
        ("IBAN DE89 3704 0044 0532 0130 00 for refunds", "a bank account number (IBAN)"),
        ("the build uses 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 as seed", None),
        ("Keep my wallet seed phrase safe: apple river stone cloud piano ember", "a seed phrase"),
        ("the mnemonic for the cold wallet is lamp ivory tunnel", "a mnemonic"),
        ("My one-time code is 493021", "a one time code"),
        ("2FA recovery codes: 4KD9-PL2M-88QZ", "a recovery code"),
        ("Spare login key 5TRW-K2J9-0PLA for the VPN", "what looks like a code or key"),
        ("the door code is 4417", "a door code"),
        ("reporting DB: postgresql://etl_user:Winter-42@db.internal:5432/dw", "a password in a URL"),
        ("clone from https://deploy:s3cr3t@git.example.org/ops.git", "a password in a URL"),
    ],
)
def test_secrets_are_found(text: str, kind: str | None) -> None:
    found = find_secret(text)
    assert found is not None, text
    if kind is not None:
        assert found == kind


@pytest.mark.parametrize(
    "text",
    [
        "I'm a Project Finance Analyst.",
        "Notre politique de mot de passe impose 12 caractères.",
        "We hold team meetings every Friday at 10 AM.",
        "Our company just migrated from AWS to GCP last quarter.",
        "My employee number is short: order 12345 ships on 2026-03-01.",
        "I reset passwords for the help desk every Monday.",
        "Card 4111 1111 1111 1112 fails the checksum, so it is just a number.",
        "We are ISO-9001-2015 certified.",
        "Our office zip code is 75001 and the dress code is casual.",
        "I handle the recovery of overdue invoices.",
        "Part X-7734 fits the 2019 compressor.",
        "Our wiki is at https://wiki.example.org/finance and the DB host is db.internal:5432.",
        "Mail me at anna@example.org about the https://example.org/form link.",
    ],
)
def test_ordinary_facts_are_not_secrets(text: str) -> None:
    assert find_secret(text) is None
