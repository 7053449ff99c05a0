"""`ragchat sanity` (what `make sanity` runs) on the 0.5B: the artifact it writes
passes the judge's validator, and every part of it came from the run (the sample documents, the
memory files, the replayed weather)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.settings import PROJECT_ROOT
from ragchat.sanity import FACTS, QUESTIONS
from scripts.validate_sanity import validate
from tests.cli_in_process import ragchat


def test_sanity_writes_an_artifact_the_validator_accepts(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir()  # the project root of this run: the memory files are written here
    artifact = home / "artifacts" / "sanity_output.json"
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    run = ragchat("sanity", "--out", str(artifact))
    assert run.returncode == 0, run.stderr
    assert validate(artifact) == []
    payload = json.loads(artifact.read_text())
    assert payload["implemented_features"] == ["A", "B", "C"]
    assert [item["question"] for item in payload["qa"]] == list(QUESTIONS)
    samples = {p.name for p in (PROJECT_ROOT / "sample_docs").iterdir()}
    texts = {p.name: p.read_text(errors="ignore") for p in (PROJECT_ROOT / "sample_docs").iterdir()}
    for item in payload["qa"]:
        for citation in item["citations"]:
            assert citation["source"] in samples
            if not citation["source"].endswith(".pdf"):  # a text file's snippet is its own words
                assert "p. " not in citation["locator"]
                assert citation["snippet"].split()[0] in texts[citation["source"]]
    writes = payload["demo"]["memory_writes"]
    assert {w["target"] for w in writes} == {"USER", "COMPANY"} and len(writes) == len(FACTS)
    for write in writes:
        assert f"- {write['summary']}" in (home / f"{write['target']}_MEMORY.md").read_text()
    assert "Rotterdam" in run.stderr and "weather:" in run.stderr
