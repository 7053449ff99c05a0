"""`ragchat eval --memory DIR`: the evaluation's home starts with the folder's memory files."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.runner import EvalError, _start_memory


def test_the_memory_files_are_copied_and_their_entries_listed(tmp_path: Path) -> None:
    folder, home = tmp_path / "persona", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    (folder / "USER_MEMORY.md").write_text("# User memory\n\n- The user is a nurse.\n", encoding="utf-8")
    (folder / "COMPANY_MEMORY.md").write_text("# Company memory\n\n- The company has 240 employees.\n")
    assert _start_memory(folder, home) == ["The user is a nurse.", "The company has 240 employees."]
    assert (home / "USER_MEMORY.md").read_text(encoding="utf-8").endswith("- The user is a nurse.\n")
    assert _start_memory(None, home) == []


def test_a_folder_without_both_files_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "USER_MEMORY.md").write_text("- The user is a nurse.\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(EvalError, match=r"has no COMPANY_MEMORY\.md"):
        _start_memory(tmp_path, home)
    assert list(home.iterdir()) == [], "nothing copied"
