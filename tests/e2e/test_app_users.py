"""Users in the app through Streamlit's AppTest: the sidebar's user name switches the memory panel
and the conversations; with RAGCHAT_USER_HEADER set, a request without the header sees nothing.

AppTest cannot give a session request headers (its `context` seeds only timezone, locale, URL,
theme; headers come from the browser's connection), so the signed-in path of header mode is
tested in a real browser (tests/browser/test_users_in_browser.py) and the header → user rule in
tests/unit/test_users.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from core.settings import PROJECT_ROOT, get_settings
from rag.messages import REFUSAL_TEXT
from ragchat.application import open_session

APP = PROJECT_ROOT / "app.py"
TIMEOUT_S = 240


def _texts(block: Block) -> str:
    return "\n".join([m.value for m in block.markdown] + [c.value for c in block.caption])


def _memory_panel(at: AppTest) -> Block:
    return next(e for e in at.sidebar.expander if e.label.startswith("Memory"))


def _user_label(at: AppTest) -> str:
    """The label of the sidebar's user popover (AppTest has no accessor for popovers)."""
    [popover] = [b for b in at.sidebar.children.values() if isinstance(b, Block) and b.type == "popover"]
    return popover.proto.popover.label


def test_the_sidebar_user_switches_memory_and_conversations(home: Path) -> None:
    root = open_session(get_settings())
    root.app.session("alice").memory.files["USER"].add("User is a Project Finance Analyst.")
    root.app.session("bob").memory.files["USER"].add("User prefers weekly summaries on Mondays.")
    root.memory.files["COMPANY"].add("Company migrated from AWS to GCP last quarter.")
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert not at.exception

    # The default user: the single-user files, the shared company line, nobody's user line.
    assert _user_label(at) == "User: default"
    panel = _texts(_memory_panel(at))
    assert "Company migrated from AWS to GCP last quarter." in panel
    assert "Project Finance" not in panel and "weekly summaries" not in panel

    at.sidebar.text_input(key="user_field").set_value("Alice").run()
    assert not at.exception
    assert _user_label(at) == "User: alice" and at.sidebar.text_input(key="user_field").value == "alice"
    panel = _texts(_memory_panel(at))
    assert "User is a Project Finance Analyst." in panel and "weekly summaries" not in panel
    assert "Company migrated from AWS to GCP last quarter." in panel
    assert "Shared by everyone who uses this ragchat." in panel
    assert _memory_panel(at).label == "Memory (2)"

    # Alice asks (nothing is indexed: the refusal, no model); the turn is her conversation.
    at.chat_input[0].set_value("Who painted the Mona Lisa?").run()
    assert REFUSAL_TEXT in [m.value for m in at.main.markdown]
    at.run()  # the sidebar was drawn before the turn was stored
    assert any(s.label == "Continue a conversation" for s in at.sidebar.selectbox)

    at.sidebar.text_input(key="user_field").set_value("bob").run()
    assert not at.exception
    assert _user_label(at) == "User: bob"
    panel = _texts(_memory_panel(at))
    assert "User prefers weekly summaries on Mondays." in panel and "Project Finance" not in panel
    assert not at.chat_message  # alice's conversation left the screen with her
    assert not any(s.label == "Continue a conversation" for s in at.sidebar.selectbox)  # and is not listed

    # A name that breaks the rule changes nothing and says why.
    at.sidebar.text_input(key="user_field").set_value("../alice").run()
    assert not at.exception
    assert any("is not a valid user name" in w.value and "Still using bob" in w.value for w in at.sidebar.warning)
    assert _user_label(at) == "User: bob" and at.sidebar.text_input(key="user_field").value == "bob"

    at.sidebar.text_input(key="user_field").set_value("alice").run()
    picker = next(s for s in at.sidebar.selectbox if s.label == "Continue a conversation")
    [sid] = [s.session_id for s in root.app.session("alice").conversations.sessions()]
    picker.select(sid).run()
    assert not at.exception
    assert REFUSAL_TEXT in [m.value for m in at.main.markdown]  # her conversation, reopened


def test_header_mode_without_the_header_shows_a_message_and_no_data(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCHAT_USER_HEADER", "X-Forwarded-User")
    open_session(get_settings()).memory.files["USER"].add("User is a Project Finance Analyst.")
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This ragchat expects the signed-in user in the X-Forwarded-User header, and this request has none. "
        "Open it through the sign-in proxy."
    ]
    assert not at.chat_input and not at.sidebar.expander and not at.sidebar.text_input
    assert "Project Finance" not in _texts(at.sidebar) + _texts(at.main)


def test_per_user_documents_follow_the_user_in_the_sidebar(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCHAT_DOCUMENTS", "per_user")
    note = tmp_path / "travel.md"
    note.write_text("# Travel policy\n\nTrain tickets are reimbursed in first class.\n", encoding="utf-8")
    assert open_session(get_settings(), user="alice").ingest_paths([note])[0].status == "indexed"
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert "No documents indexed yet." in _texts(at.sidebar)  # the default user has none
    at.sidebar.text_input(key="user_field").set_value("alice").run()
    assert "travel.md" in _texts(at.sidebar) and "No documents indexed yet." not in _texts(at.sidebar)
    at.sidebar.text_input(key="user_field").set_value("bob").run()
    assert not at.exception
    assert "travel.md" not in _texts(at.sidebar) and "No documents indexed yet." in _texts(at.sidebar)
