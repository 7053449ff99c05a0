"""The import contract (.importlinter, run by `make lint`): layers point one way, no package has an
import cycle, and no private name is imported from another package."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from core.settings import PROJECT_ROOT

PACKAGES = ("core", "providers", "ingestion", "rag", "memory", "tools", "eval", "ragchat", "ui")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_project_keeps_its_import_contract() -> None:
    result = lint_imports(PROJECT_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_a_wrong_way_import_breaks_the_contract(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / ".importlinter", tmp_path / ".importlinter")
    with (tmp_path / "core" / "text.py").open("a", encoding="utf-8") as module:
        module.write("\nimport rag.pipeline  # the bottom layer reaching up\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "core is not allowed to import rag" in result.stdout


def test_no_private_name_is_imported_from_another_package() -> None:
    crossings: list[str] = []
    for package in PACKAGES:
        for path in (PROJECT_ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom) or not node.module:
                    continue
                other = node.module.split(".")[0]
                if other in PACKAGES and other != package:
                    crossings += [f"{path.name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert crossings == []
