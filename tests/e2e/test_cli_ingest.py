"""`ragchat ingest --password/--redact`, `ragchat redactions` and `ragchat reindex` as a script sees them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_in_process import ragchat
from tests.fixtures import encrypted_pdf_bytes


def test_password_redaction_report_and_reindex(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypted_pdf_bytes("tide", "Berth 7 closes for dredging in April."))
    contacts = tmp_path / "contacts.txt"
    contacts.write_bytes("Dredging questions: harbour.master@example.net, Tél. +31 10 252 1010.".encode("cp1252"))

    first = ragchat("ingest", str(locked), str(contacts), "--redact", "--json")
    assert first.returncode == 1, "one file failed"
    rows = {row["source"]: row for row in json.loads(first.stdout)}
    assert rows["locked.pdf"]["status"] == "failed" and rows["locked.pdf"]["needs_password"] is True
    assert {"source", "status", "pages", "chunks", "error"} <= set(rows["locked.pdf"])
    assert rows["contacts.txt"]["status"] == "indexed"
    assert (rows["contacts.txt"]["encoding"], rows["contacts.txt"]["redactions"]) == ("cp1252", 2)

    second = ragchat("ingest", str(locked), "--password", "tide", "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)[0]["status"] == "indexed"

    report = json.loads(ragchat("redactions", "contacts.txt", "--json").stdout)
    assert [r["kind"] for r in report] == ["email", "phone"]
    assert all("harbour.master" not in r["preview"] for r in report)

    monkeypatch.setenv("RAGCHAT_CHUNK_SIZE", "120")
    refused = ragchat("search", "dredging", "--json")
    assert refused.returncode == 1 and "chunk_size: 200 → 120" in refused.stderr and "reindex" in refused.stderr
    rebuilt = ragchat("reindex", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert sorted(r["source"] for r in json.loads(rebuilt.stdout)) == ["contacts.txt", "locked.pdf"]
    hits = json.loads(ragchat("search", "Berth dredging April", "-k", "1", "--json").stdout)
    assert hits[0]["source"] == "locked.pdf"
    assert os.environ["RAGCHAT_CHUNK_SIZE"] == "120"
