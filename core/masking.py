"""Masking of personal data and secrets before anything is written to SQLite.

Emails → [EMAIL], IP addresses → [IP], card numbers → [CARD], secrets (named passwords and keys, key
and token formats, IBANs; core/secrets.py) → [SECRET], phone numbers → [PHONE]. The query log, the
stored conversations and the memory-write log all mask on write, so the raw text never reaches the
database file, its journal or a backup of it. Masking errs towards masking: an order number shaped
like a phone number is masked too; a missed phone number would be stored for good.
"""

from __future__ import annotations

import re
from typing import Any

from core.secrets import luhn_valid, secret_spans

EMAIL = "[EMAIL]"
PHONE = "[PHONE]"
CARD = "[CARD]"
IP = "[IP]"
SECRET = "[SECRET]"

_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?::\d{{1,5}})?(?![\w.]*\d)")
# Full IPv6, or a compressed one (with "::", which clock times never have).
_IPV6 = re.compile(
    r"(?<![\w:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){0,6}:(?::?[0-9A-Fa-f]{1,4}){1,7}|::)"
    r"(?![\w:])"
)
_CARD_DIGITS = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_CARD_GROUPS = re.compile(r"(?<!\d)\d{4}([ -])\d{4}\1\d{4}\1\d{1,4}(?!\d)")
# A phone-shaped run: optional +country or 00, optional (area), then digit groups; _is_phone decides.
_PHONE = re.compile(
    r"(?<![\w+.,/-])(?:(?:\+|00)\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?\d{1,12}(?:[\s.-]\d{1,12}){0,5}(?![\w]|[.,-]\d)"
)
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?: \d{3})+")
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")
_YEAR = re.compile(r"1\d{3}|2\d{3}")


def mask(text: str) -> str:
    """The text with every email, IP address, card number, secret and phone number replaced."""
    if not text:
        return text
    text = _EMAIL.sub(EMAIL, text)
    text = _IPV4.sub(IP, text)
    text = _IPV6.sub(lambda m: IP if m.group().count(":") >= 2 else m.group(), text)
    text = _CARD_GROUPS.sub(CARD, text)
    text = _CARD_DIGITS.sub(lambda m: CARD if luhn_valid(re.sub(r"\D", "", m.group())) else m.group(), text)
    text = _replace_spans(text, secret_spans(text), SECRET)
    return _PHONE.sub(lambda m: PHONE if _is_phone(m.group()) else m.group(), text)


def mask_data(value: Any, keep: frozenset[str] = frozenset()) -> Any:
    """Every string inside JSON-like data masked, except the values of the keys in `keep` (ids)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [mask_data(item, keep) for item in value]
    if isinstance(value, dict):
        return {k: v if k in keep else mask_data(v, keep) for k, v in value.items()}
    return value


def _is_phone(candidate: str) -> bool:
    digits = re.sub(r"\D", "", candidate)
    if not 7 <= len(digits) <= 15 or _DATE.fullmatch(candidate):
        return False
    if candidate.startswith(("+", "00", "(")):
        return True
    groups = re.split(r"[\s.-]+", candidate)
    if len(groups) == 1:
        return 9 <= len(digits) <= 12  # a bare run: national numbers, not amounts or years
    if all(_YEAR.fullmatch(g) for g in groups) or _THOUSANDS.fullmatch(candidate):
        return False  # "1066-1087", "2019 2020": years; "4 900 000": an amount
    return not (len(groups) == 2 and "." in candidate and " " not in candidate and "-" not in candidate)


def _replace_spans(text: str, spans: list[tuple[int, int]], placeholder: str) -> str:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    for start, end in reversed(merged):
        text = text[:start] + placeholder + text[end:]
    return text
