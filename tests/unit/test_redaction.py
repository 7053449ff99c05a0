from __future__ import annotations

from pathlib import Path

import pytest

from ingestion.redaction import Redactor

KEY = b"k" * 32


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("jane.doe+billing@example.co.uk", "email"),
        ("+1 (555) 123-4567", "phone"),
        ("+44 20 7946 0958", "phone"),
        ("030 1234 5678", "phone"),
        ("555-123-4567", "phone"),
        ("192.168.10.254", "ip"),
        ("2001:db8::8a2e:370:7334", "ip"),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "token"),
        ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "token"),
    ],
)
def test_each_kind_is_replaced_by_a_stable_placeholder(value: str, kind: str) -> None:
    redactor = Redactor(KEY)
    text, report = redactor.redact(f"Contact: {value}, thanks.", page=3)
    assert value not in text
    assert [(r.kind, r.page) for r in report] == [(kind, 3)]
    placeholder = report[0].placeholder
    assert placeholder.startswith(f"[{kind.upper()}_") and placeholder in text
    assert text == f"Contact: {placeholder}, thanks."
    again, _ = Redactor(KEY).redact(f"Again {value}.", page=1)
    assert placeholder in again, "the same value gets the same placeholder in every document"
    other, _ = Redactor(b"x" * 32).redact(f"Again {value}.", page=1)
    assert placeholder not in other, "placeholders are keyed per home, not a plain hash"
    assert value not in report[0].preview


@pytest.mark.parametrize(
    "text",
    [
        "Revenue grew to 1,250,000 in 2024-05-01 and 12.5% in Q4 2025.",
        "Version v2.3.1 of the tool; see section 4.2.",
        "The Donaudampfschifffahrtsgesellschaftskapitän retired.",
        "Call extension 4471 or room 12.",
        "Path /usr/local/share/documentation/index.html is long.",
    ],
)
def test_ordinary_numbers_and_words_are_left_alone(text: str) -> None:
    redacted, report = Redactor(KEY).redact(text, page=1)
    assert (redacted, report) == (text, [])


def test_several_values_in_one_text() -> None:
    text = "Mail a@b.io or call +49 30 123456 78 from 10.0.0.1; a@b.io again."
    redacted, report = Redactor(KEY).redact(text, page=2)
    assert [r.kind for r in report] == ["email", "phone", "ip", "email"]
    assert report[0].placeholder == report[3].placeholder
    assert "a@b.io" not in redacted and "10.0.0.1" not in redacted


def test_the_key_is_created_once_per_home(tmp_path: Path) -> None:
    first = Redactor.for_home(tmp_path).placeholder("email", "a@b.io")
    assert Redactor.for_home(tmp_path).placeholder("email", "a@b.io") == first
    assert (tmp_path / "redaction.key").stat().st_mode & 0o077 == 0
