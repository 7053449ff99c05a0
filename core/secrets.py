"""The secret detector: a veto the memory graph applies whatever the model decided.

It errs towards refusing: a false alarm costs one unremembered fact, a miss writes a password into
a plain-text file that may be synced or shared.
"""

from __future__ import annotations

import re

# "my password is …", "api key: …", "the PIN is 1234" — a secret named, then given; in the languages
# the memory writes lines in too ("mein Passwort ist …", "mon mot de passe est …", "la contraseña es …").
_NAMED_SECRET = re.compile(
    r"\b(pass(?:word|wd|phrase|code)|pin(?:\s+code)?|api[\s_-]?key|access[\s_-]?key|secret(?:[\s_-]?key)?|"
    r"(?:auth|access|bearer|refresh|session)?[\s_-]?token|private[\s_-]?key|credentials?|login|"
    r"social\s+security(?:\s+number)?|ssn|cvv|cvc|security\s+code|"
    # wallet and account recovery words, and the codes of a second factor or a lock
    r"(?:recovery|seed|secret|mnemonic|wallet)[\s_-]?(?:phrase|words)|mnemonic|"
    r"(?:backup|recovery|one[\s_-]?time|verification|2fa|mfa|otp|totp|sms|authenticator|unlock|door|alarm|safe)"
    r"[\s_-]?codes?|otp|totp|"
    r"passwort|kennwort|geheimzahl|mot\s+de\s+passe|code\s+(?:pin|secret)|contrase[ñn]a|clave|senha|"
    r"parola\s+d'?\s*ordine|wachtwoord|pincode)\b"
    r"[^.\n]{0,30}?(?:\b(?:is|are|was|ist|lautet|war|est|était|es|era|è|é|era|zijn)\b|:|=)",
    re.IGNORECASE,
)
_SECRET_NAMES = {"passwort": "password", "kennwort": "password", "mot de passe": "password", "contraseña": "password"}
_SECRET_NAMES |= {"contrasena": "password", "senha": "password", "wachtwoord": "password", "geheimzahl": "PIN"}
_SECRET_NAMES |= {"code pin": "PIN", "pincode": "PIN", "clave": "password", "code secret": "secret code"}

_TOKEN_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("an API key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")),
    ("a bearer token", re.compile(r"\bbearer\s+[A-Za-z0-9._\-]{16,}", re.IGNORECASE)),
    ("a social security number", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    # user:password@ in a URL: database connection strings, git remotes, proxies ("postgres://app:Xq7@db:5432/")
    ("a password in a URL", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s/:@]+:[^\s/@]+@", re.IGNORECASE)),
]

# A long run mixing letters and digits with no spaces: how generated keys and tokens look.
_OPAQUE_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_\-+/=]*\d)(?=[A-Za-z0-9_\-+/=]*[A-Za-z])[A-Za-z0-9_\-+/=]{24,}\b")
# Groups of letters and digits joined by hyphens, at least two of them mixing both ("7H3K-92LD-QX4M"):
# how backup codes, licence keys and recovery keys are written; "ISO-9001-2015" mixes in no group.
_GROUPED_CODE = re.compile(r"\b[A-Za-z0-9]{3,8}(?:-[A-Za-z0-9]{3,8}){2,}\b")
_MIXED_GROUP = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])")
_CARD_CANDIDATE = re.compile(r"\b\d(?:[ -]?\d){12,18}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b")


def find_secret(text: str) -> str | None:
    """What kind of secret `text` appears to hold ("a password", "a card number"), or None."""
    if match := _NAMED_SECRET.search(text):
        name = " ".join(match.group(1).lower().replace("_", " ").replace("-", " ").split())
        name = _SECRET_NAMES.get(name, "password" if name.startswith("parola") else name)
        name = name.replace("api", "API").replace("pin", "PIN").replace("ssn", "SSN").replace("cvv", "CVV")
        name = re.sub(r"\bcodes\b", "code", name)
        vowel = name[0].lower() in "aeiou" and not name.lower().startswith(("one", "uni", "eu"))
        return f"{'an' if vowel else 'a'} {name}"
    for label, pattern in _TOKEN_PATTERNS:
        if pattern.search(text):
            return label
    for candidate in _CARD_CANDIDATE.findall(text):
        if luhn_valid(re.sub(r"\D", "", candidate)):
            return "a card number"
    for candidate in _IBAN.findall(text):
        if _iban_valid(candidate.replace(" ", "")):
            return "a bank account number (IBAN)"
    if _OPAQUE_TOKEN.search(text):
        return "what looks like a key or token"
    if any(_grouped_code(m.group()) for m in _GROUPED_CODE.finditer(text)):
        return "what looks like a code or key"
    return None


def _grouped_code(candidate: str) -> bool:
    return sum(bool(_MIXED_GROUP.match(group)) for group in candidate.split("-")) >= 2


# What a named secret's value runs to: the end of the clause (a sentence end, a line break).
_SECRET_VALUE = re.compile(r"\s*(\S.*?)(?=[.;,!?](?:\s|$)|\n|$)")


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets in `text` sit (start, end), for masking before anything is stored: the value
    after a named secret ("password is hunter2" → "hunter2", to the end of its clause), known key and
    token formats, Luhn-valid card numbers, IBANs and long letter-and-digit runs."""
    spans: list[tuple[int, int]] = []
    for match in _NAMED_SECRET.finditer(text):
        if value := _SECRET_VALUE.match(text, match.end()):
            spans.append(value.span(1))
    for _, pattern in _TOKEN_PATTERNS:
        spans += [m.span() for m in pattern.finditer(text)]
    spans += [m.span() for m in _CARD_CANDIDATE.finditer(text) if luhn_valid(re.sub(r"\D", "", m.group()))]
    spans += [m.span() for m in _IBAN.finditer(text) if _iban_valid(m.group().replace(" ", ""))]
    spans += [m.span() for m in _OPAQUE_TOKEN.finditer(text)]
    spans += [m.span() for m in _GROUPED_CODE.finditer(text) if _grouped_code(m.group())]
    return spans


def luhn_valid(digits: str) -> bool:
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _iban_valid(iban: str) -> bool:
    rearranged = iban[4:] + iban[:4]
    numeric = "".join(str(int(ch, 36)) for ch in rearranged)
    return 15 <= len(iban) <= 34 and int(numeric) % 97 == 1
