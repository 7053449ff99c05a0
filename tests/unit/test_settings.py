from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import PROJECT_ROOT, get_settings


def test_defaults_put_data_in_the_project_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("RAGCHAT_HOME", "RAGCHAT_LLM_PROVIDER", "RAGCHAT_LLM_MODEL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    settings = get_settings()
    assert settings.home == PROJECT_ROOT
    assert settings.chroma_path == PROJECT_ROOT / "chroma_db"
    assert settings.llm_provider == "auto"
    assert settings.chroma_host is None


def test_environment_and_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("RAGCHAT_TOP_K=7\nRAGCHAT_LLM_PROVIDER=ollama\n")
    monkeypatch.setenv("RAGCHAT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:11434")
    monkeypatch.setenv("RAGCHAT_CHROMA_HOST", "127.0.0.1")
    settings = get_settings()
    assert settings.top_k == 7
    assert settings.llm_provider == "ollama"
    assert settings.home == tmp_path / "data"
    assert settings.ollama_host == "http://gpu-box:11434"
    assert settings.chroma_host == "127.0.0.1"


def test_invalid_provider_is_rejected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "gpt-cloud")
    with pytest.raises(ValueError, match="llm_provider"):
        get_settings()


def test_overrides_win_and_none_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_TOP_K", "3")
    assert get_settings(top_k=9).top_k == 9
    assert get_settings(top_k=None).top_k == 3
