"""The app's ingestion panel with the real stores and embedder: background ingest with live
progress, the password prompt, the redaction report, and the rebuild offer after a settings change."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.e2e.test_app import APP, TIMEOUT_S, _texts, wait_for_ingest
from tests.fixtures import encrypted_pdf_bytes


def _button(at: AppTest, label: str):
    return next(b for b in at.sidebar.button if b.label == label)


def test_password_prompt_redaction_report_and_rebuild(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    assert not at.exception

    locked = encrypted_pdf_bytes("tide", "Berth 7 closes for dredging in April.")
    at.sidebar.file_uploader[0].set_value(("locked.pdf", locked, "application/pdf"))
    at.run()
    _button(at, "Index files").click().run()
    wait_for_ingest(at)
    assert any("locked.pdf" in w.value and "encrypted with a password" in w.value for w in at.sidebar.warning)
    password = next(t for t in at.sidebar.text_input if t.label == "Password for locked.pdf")
    password.input("tide").run()
    _button(at, "Open with this password").click().run()
    wait_for_ingest(at)
    assert not at.exception
    assert any("locked.pdf" in s.value and "indexed" in s.value for s in at.sidebar.success)

    contacts = b"Questions about dredging: harbour.master@example.net or +31 10 252 1010."
    at.sidebar.checkbox[0].check().run()
    at.sidebar.file_uploader[0].set_value(("contacts.txt", contacts, "text/plain"))
    at.run()
    _button(at, "Index files").click().run()
    wait_for_ingest(at)
    assert any("contacts.txt" in s.value and "indexed" in s.value for s in at.sidebar.success)
    report = next(e for e in at.sidebar.expander if e.label.startswith("Redactions"))
    assert report.label == "Redactions (2)"
    table = report.dataframe[0].value
    assert list(table["kind"]) == ["email", "phone"]
    assert not table["was"].str.contains("harbour.master").any()
    assert "2 values redacted" in _texts(at.sidebar)

    monkeypatch.setenv("RAGCHAT_CHUNK_SIZE", "120")
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run()
    notice = next(w for w in at.sidebar.warning if "must be rebuilt" in w.value)
    assert "chunk_size: 200 → 120" in notice.value
    _button(at, "Rebuild index").click().run()
    wait_for_ingest(at)
    assert not at.exception
    assert any("Index rebuilt: 2 document(s)" in s.value for s in at.sidebar.success)
    assert not any("must be rebuilt" in w.value for w in at.sidebar.warning)
