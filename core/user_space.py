"""Where one user's data lives under RAGCHAT_HOME: memory files, Chroma collection, BM25 index, registry."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel

from core.settings import Settings
from core.users import user_name

# Chroma: 3-63 characters of [a-zA-Z0-9._-], alphanumeric at both ends, no "..".
_CHROMA_NAME_MAX = 63
_PLAIN = re.compile(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")


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
