"""With RAGCHAT_HOME at the project root (the default), nothing the app writes there shows in
`git status`: the index, the logs, the redaction key, lock files, a named user's folder. Only the
tracked memory files change."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from core.settings import PROJECT_ROOT, get_settings
from ragchat.application import App
from ragchat.cli import main

SAMPLES = sorted((PROJECT_ROOT / "sample_docs").iterdir())


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_everything_the_app_writes_in_a_project_root_home_is_git_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "clone"
    root.mkdir()
    git(root, "init", "-q")
    for name in (".gitignore", "USER_MEMORY.md", "COMPANY_MEMORY.md"):
        shutil.copy(PROJECT_ROOT / name, root / name)
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "clone")
    monkeypatch.setenv("RAGCHAT_HOME", str(root))
    monkeypatch.setenv("RAGCHAT_RERANKER_DIR", str(tmp_path / "flashrank"))
    monkeypatch.setenv("RAGCHAT_DOCUMENTS", "per_user")  # a named user gets an index of their own

    app = App(get_settings())
    default, alice = app.session(None), app.session("alice")
    assert all(r.status == "indexed" for r in default.ingest_paths(SAMPLES, redact=True))
    assert all(r.status == "indexed" for r in alice.ingest_paths(SAMPLES[:1]))
    default.memory.files["USER"].add("Prefers answers in metric units.")
    alice.memory.files["USER"].add("Works in the Lyon office.")
    default.ask_stream("Who painted the Mona Lisa?").finish()  # refused without the model: query log only
    assert main(["docs", "--json"]) == 0  # the CLI keeps its log folder in the home

    written = {p.relative_to(root).parts[0] for p in root.iterdir()} - {".git"}
    assert {"chroma_db", "bm25_index", "ragchat.sqlite3", "redaction.key", "users", "logs"} <= written, written
    status = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(status) == [" M USER_MEMORY.md"], status
