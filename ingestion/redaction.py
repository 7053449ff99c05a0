"""Optional PII redaction at ingest: e-mail addresses, phone numbers, IP addresses and long
secret-looking tokens become stable placeholders such as ``[EMAIL_3f9a1c2b]``.

A placeholder is a keyed hash (HMAC-SHA256 with a random key kept in ``RAGCHAT_HOME/redaction.key``),
so the same value gets the same placeholder in every document of that home (a search for the
placeholder finds every mention) while nobody can confirm a guessed address by hashing it. The
original values are not stored anywhere: the report keeps the placeholder, the page and a masked
preview ("j•••@example.com", "•••• 1234").
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from core.schemas import Redaction

Kind = Literal["email", "phone", "ip", "token"]  # Redaction.kind

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
# International or national numbers: an optional +country code, then 8+ digits in groups separated by
# spaces, dots, dashes or parentheses. Dates (2024-05-01) and plain amounts (1,250,000) do not match.
_PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,5}(?:[ .-]\d{2,6}){1,4}(?![\w-])")
_TOKEN = re.compile(r"(?<![\w/+=-])[A-Za-z0-9_\-+/=]{24,}(?![\w/+=-])")
_DATE = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$")


class Redactor:
    def __init__(self, key: bytes) -> None:
        self._key = key

    @classmethod
    def for_home(cls, home: Path) -> Redactor:
        """The home's key, created on first use (readable by the owner only)."""
        path = home / "redaction.key"
        if not path.exists():
            home.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
            os.replace(tmp, path)
        return cls(path.read_bytes())

    def placeholder(self, kind: str, value: str) -> str:
        digest = hmac.new(self._key, f"{kind}:{value.lower()}".encode(), hashlib.sha256).hexdigest()[:8]
        return f"[{kind.upper()}_{digest}]"

    def redact(self, text: str, page: int) -> tuple[str, list[Redaction]]:
        """The text with every match replaced, and one report entry per replacement."""
        found: list[tuple[int, int, Kind]] = []  # start, end, kind; first kind to claim a span wins
        rules: tuple[tuple[Kind, re.Pattern[str], Callable[[str], bool]], ...] = (
            ("email", _EMAIL, lambda v: True),
            ("ip", _IPV4, _is_ip),
            ("ip", _IPV6, _is_ipv6),
            ("token", _TOKEN, _looks_secret),
            ("phone", _PHONE, _looks_like_phone),
        )
        for kind, pattern, accept in rules:
            for match in pattern.finditer(text):
                start, end = match.span()
                if accept(match.group()) and not any(s < end and start < e for s, e, _ in found):
                    found.append((start, end, kind))
        if not found:
            return text, []
        found.sort()
        parts: list[str] = []
        report: list[Redaction] = []
        cursor = 0
        for start, end, kind in found:
            value = text[start:end]
            placeholder = self.placeholder(kind, value)
            parts += [text[cursor:start], placeholder]
            report.append(Redaction(page=page, kind=kind, placeholder=placeholder, preview=_mask(kind, value)))
            cursor = end
        parts.append(text[cursor:])
        return "".join(parts), report


def _is_ip(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def _is_ipv6(value: str) -> bool:
    if value.count(":") < 2 or not any(c.isalnum() for c in value):
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _looks_secret(value: str) -> bool:
    """Long runs of letters *and* digits (API keys, session tokens, hashes), not long words or paths."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and len(set(value)) >= 10


def _looks_like_phone(value: str) -> bool:
    digits = sum(c.isdigit() for c in value)
    if not 8 <= digits <= 15 or _DATE.match(value):
        return False
    groups = re.split(r"[ .()-]+", value.lstrip("+"))
    # "1.250.000" style amounts: every group after the first has exactly three digits and no + prefix.
    return value.startswith("+") or not (len(groups) > 1 and all(len(g) == 3 for g in groups[1:]) and "." in value)


def _mask(kind: str, value: str) -> str:
    if kind == "email":
        local, _, domain = value.partition("@")
        return f"{local[:1]}•••@{domain}"
    if kind == "phone":
        digits = [c for c in value if c.isdigit()]
        return "•••• " + "".join(digits[-2:])
    if kind == "ip":
        return value.split(".")[0] + ".•.•.•" if "." in value else value.split(":")[0] + ":•••"
    return f"{value[:4]}•••({len(value)} chars)"
