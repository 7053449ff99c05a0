"""User names, the header a sign-in proxy sets, and where each user's data lives."""

from __future__ import annotations

from pathlib import Path

import pytest
from chromadb.api.segment import check_index_name

from core.settings import get_settings
from core.user_space import collection_for, user_space
from core.users import InvalidUserName, MissingUserHeader, user_from_headers, user_name


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("alice", "alice"),
        ("  Alice ", "alice"),
        ("ALICE@Example.COM", "alice@example.com"),
        ("j.doe_2-x", "j.doe_2-x"),
        ("_svc", "_svc"),
        ("a" * 64, "a" * 64),
        (None, None),
        ("", None),
        ("   ", None),
    ],
)
def test_valid_names_are_kept_in_lower_case_and_blank_is_the_default_user(raw: str | None, canonical: str) -> None:
    assert user_name(raw) == canonical


@pytest.mark.parametrize(
    "raw",
    ["..", "../etc", ".hidden", "a/b", "a\\b", "a b", "bob\n../x", "a:b", "ä", "a\x00b", "a" * 65, "~root", "$HOME"],
)
def test_other_names_are_refused_with_the_rule(raw: str) -> None:
    with pytest.raises(InvalidUserName, match=r"is not a valid user name \(1–64 characters"):
        user_name(raw)


def test_the_default_user_keeps_the_single_user_layout(tmp_path: Path) -> None:
    settings = get_settings(home=tmp_path, documents="per_user", company_memory="per_user")
    space = user_space(settings, None)
    assert space.user is None
    assert space.user_memory_dir == space.company_memory_dir == tmp_path
    assert (space.collection, space.bm25_path, space.registry_path) == (
        "ragchat",
        tmp_path / "bm25_index",
        tmp_path / "ragchat.sqlite3",
    )


def test_a_named_user_has_a_folder_and_by_default_shares_company_memory_and_documents(tmp_path: Path) -> None:
    settings = get_settings(home=tmp_path)
    space = user_space(settings, "Alice")
    assert space.user == "alice"
    assert space.user_memory_dir == tmp_path / "users" / "alice"
    assert space.company_memory_dir == tmp_path
    assert (space.collection, space.bm25_path, space.registry_path) == (
        "ragchat",
        tmp_path / "bm25_index",
        tmp_path / "ragchat.sqlite3",
    )


def test_per_user_documents_and_company_memory_live_in_the_users_folder(tmp_path: Path) -> None:
    settings = get_settings(home=tmp_path, documents="per_user", company_memory="per_user")
    space = user_space(settings, "bob")
    folder = tmp_path / "users" / "bob"
    assert space.company_memory_dir == folder
    assert (space.collection, space.bm25_path, space.registry_path) == (
        "ragchat__bob",
        folder / "bm25_index",
        folder / "documents.sqlite3",
    )


def test_a_user_folder_never_leaves_the_users_directory(tmp_path: Path) -> None:
    settings = get_settings(home=tmp_path)
    for name in ["alice", "a..b", "x.", "@", "-", "_", "a" * 64]:
        folder = user_space(settings, name).user_memory_dir
        assert folder.parent == tmp_path / "users" and folder.resolve().parent == (tmp_path / "users").resolve()


def test_collections_follow_chromas_rules_and_never_collide() -> None:
    names = ["bob", "a.b", "a_b", "a@b", "a-b", "a..b", "x", "-", "_x_", "alice@example.com", "a" * 64, "a" * 63 + "b"]
    collections = [collection_for("ragchat", name) for name in names]
    for collection in collections:
        check_index_name(collection)  # raises ValueError with Chroma's rules when broken
    assert len(set(collections)) == len(names)
    assert collection_for("ragchat", "bob") == "ragchat__bob"
    assert collection_for("ragchat", "a.b").startswith("ragchat__a_b.")


def test_the_proxy_header_names_the_user() -> None:
    assert user_from_headers({"X-Forwarded-User": "Alice"}, "X-Forwarded-User") == "alice"
    assert user_from_headers({"x-forwarded-user": "bob@example.com"}, "X-Forwarded-User") == "bob@example.com"
    for headers in ({}, {"X-Forwarded-User": ""}, {"X-Forwarded-User": "  "}, {"X-Other": "alice"}):
        with pytest.raises(MissingUserHeader, match="expects the signed-in user in the X-Forwarded-User header"):
            user_from_headers(headers, "X-Forwarded-User")
    with pytest.raises(InvalidUserName):
        user_from_headers({"X-Forwarded-User": "../alice"}, "X-Forwarded-User")


def test_settings_validate_the_user_and_the_modes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_USER", "Carol")
    monkeypatch.setenv("RAGCHAT_DOCUMENTS", "per_user")
    monkeypatch.setenv("RAGCHAT_USER_HEADER", "X-Forwarded-User")
    settings = get_settings()
    assert (settings.user, settings.documents, settings.user_header) == ("carol", "per_user", "X-Forwarded-User")
    assert settings.company_memory == "shared"
    monkeypatch.setenv("RAGCHAT_USER", "../carol")
    with pytest.raises(ValueError, match="not a valid user name"):
        get_settings()
    monkeypatch.setenv("RAGCHAT_USER", "carol")
    monkeypatch.setenv("RAGCHAT_DOCUMENTS", "everyone")
    with pytest.raises(ValueError, match="documents"):
        get_settings()
