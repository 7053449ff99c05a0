"""Shared fixtures: every test runs against a temporary RAGCHAT_HOME, never the project root."""

from __future__ import annotations

from pathlib import Path

import pytest

TEST_LLM = "qwen2.5-coder-0.5b"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data directory, with the embedded 0.5B test model selected."""
    data = tmp_path / "home"
    monkeypatch.setenv("RAGCHAT_HOME", str(data))
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "llamacpp")
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", TEST_LLM)
    monkeypatch.chdir(tmp_path)  # no stray .env from the working tree
    return data
