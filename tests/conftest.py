"""Shared fixtures: every test runs against a temporary RAGCHAT_HOME, never the project root."""

from __future__ import annotations

from pathlib import Path

import pytest

TEST_LLM = "qwen2.5-coder-0.5b"
# A real FlashRank model folder the project builds itself (scripts/build_tiny_cross_encoder.py).
TINY_RERANKER_DIR = Path(__file__).parent / "fixtures" / "flashrank"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--readme-screenshot",
        action="store_true",
        help="the browser tests also write the README's docs/screenshot.png (make screenshot)",
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data directory, with the embedded 0.5B test model selected and no reranker installed
    (a developer's FlashRank cache must not change what the tests see)."""
    data = tmp_path / "home"
    monkeypatch.setenv("RAGCHAT_HOME", str(data))
    monkeypatch.setenv("RAGCHAT_RERANKER_DIR", str(tmp_path / "flashrank-cache"))
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "llamacpp")
    monkeypatch.setenv("RAGCHAT_LLM_MODEL", TEST_LLM)
    monkeypatch.chdir(tmp_path)  # no stray .env from the working tree
    return data
