"""Several users on one deployment: who is asking, and where that user's data lives.

A user name is 1–64 characters of letters, digits, `.`, `_`, `-` and `@`, not starting with a dot,
compared without case (`Alice` and `alice` are one user; the name is kept in lower case). So it is
safe as a directory name under RAGCHAT_HOME/users/ (no `/`, no `..`, no hidden files) and names an
e-mail-style login a proxy passes on. No name means the default user, whose data stays exactly where
a single-user install keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import StringConstraints, TypeAdapter, ValidationError

USER_NAME_RULE = "1–64 characters: letters, digits, '.', '_', '-' or '@', not starting with '.'"
UserName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, to_lower=True, pattern=r"^[A-Za-z0-9_@-][A-Za-z0-9._@-]{0,63}$"),
]
_USER_NAME: TypeAdapter[str] = TypeAdapter(UserName)


class InvalidUserName(ValueError):
    """A user name that breaks the rule; the message says which rule, fit to show as is."""


class MissingUserHeader(LookupError):
    """The app expects the proxy's user header and this request does not carry it."""


def user_name(raw: str | None) -> str | None:
    """The canonical name (trimmed, lower case), None for the default user (None or blank), or
    InvalidUserName."""
    if raw is None or not raw.strip():
        return None
    try:
        return _USER_NAME.validate_python(raw)
    except ValidationError:
        shown = raw if len(raw) <= 80 else raw[:79] + "…"
        raise InvalidUserName(f"{shown!r} is not a valid user name ({USER_NAME_RULE})") from None


def user_from_headers(headers: Mapping[str, str], header: str) -> str:
    """The user a trusted proxy named in `header` (looked up without case, as HTTP does).
    MissingUserHeader when it is absent or empty; InvalidUserName when it breaks the rule."""
    wanted = header.lower()
    value = next((v for k, v in headers.items() if k.lower() == wanted), None)
    name = user_name(value)
    if name is None:
        raise MissingUserHeader(
            f"This ragchat expects the signed-in user in the {header} header, and this request has none. "
            "Open it through the sign-in proxy."
        )
    return name
