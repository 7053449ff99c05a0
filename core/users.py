"""Several users on one deployment: who is asking, and where that user's data lives.

A user name is 1–64 characters of letters, digits, `.`, `_`, `-` and `@`, not starting with a dot,
compared without case (`Alice` and `alice` are one user; the name is kept in lower case). So it is
safe as a directory name under RAGCHAT_HOME/users/ (no `/`, no `..`, no hidden files) and names an
e-mail-style login a proxy passes on. No name means the default user, whose data stays exactly where
a single-user install keeps it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, StringConstraints, TypeAdapter, ValidationError

if TYPE_CHECKING:
    from ragchat.settings import Settings

USER_NAME_RULE = "1–64 characters: letters, digits, '.', '_', '-' or '@', not starting with '.'"
UserName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, to_lower=True, pattern=r"^[A-Za-z0-9_@-][A-Za-z0-9._@-]{0,63}$"),
]
_USER_NAME: TypeAdapter[str] = TypeAdapter(UserName)
# Chroma: 3-63 characters of [a-zA-Z0-9._-], alphanumeric at both ends, no "..".
_CHROMA_NAME_MAX = 63
_PLAIN = re.compile(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")


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


class UserSpace(BaseModel):
    """Where one user's data lives. The default user's is the single-user layout."""

    user: str | None
    user_memory_dir: Path  # USER_MEMORY.md
    company_memory_dir: Path  # COMPANY_MEMORY.md
    collection: str  # Chroma collection of the documents this user searches
    bm25_path: Path
    registry_path: Path  # SQLite file of the document registry


def user_space(settings: Settings, user: str | None) -> UserSpace:
    """Default user: RAGCHAT_HOME itself. A named user: RAGCHAT_HOME/users/<name>/ for USER_MEMORY.md
    (COMPANY_MEMORY.md stays shared unless RAGCHAT_COMPANY_MEMORY=per_user) and, with
    RAGCHAT_DOCUMENTS=per_user, for the BM25 index and the registry, beside a collection of their own."""
    shared = UserSpace(
        user=None,
        user_memory_dir=settings.home,
        company_memory_dir=settings.home,
        collection=settings.collection,
        bm25_path=settings.bm25_path,
        registry_path=settings.db_path,
    )
    name = user_name(user)
    if name is None:
        return shared
    folder = settings.home / "users" / name
    space = shared.model_copy(update={"user": name, "user_memory_dir": folder})
    if settings.company_memory == "per_user":
        space.company_memory_dir = folder
    if settings.documents == "per_user":
        space.collection = collection_for(settings.collection, name)
        space.bm25_path = folder / "bm25_index"
        space.registry_path = folder / "documents.sqlite3"
    return space


def collection_for(base: str, user: str) -> str:
    """The user's Chroma collection: `<base>__<name>` when the name fits Chroma's rules as it is;
    otherwise its allowed characters, shortened, then `.` and a hash of the name. Plain names never
    contain a dot, so the two forms cannot meet, and two users never share a collection."""
    plain = f"{base}__{user}"
    if _PLAIN.match(user) and len(plain) <= _CHROMA_NAME_MAX:
        return plain
    digest = hashlib.sha256(user.encode("utf-8")).hexdigest()[:10]
    room = max(_CHROMA_NAME_MAX - len(base) - 2 - 1 - len(digest), 0)
    kept = re.sub(r"[^a-z0-9_-]", "_", user)[:room]
    return f"{base}__{kept}.{digest}"
