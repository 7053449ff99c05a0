"""A newcomer's first commands, as real `ragchat` processes: after `make test` only the 0.5B is
installed, and the configured 1.5B gives way to it (saying so once, with the command that installs it);
an error is one line on the terminal, its traceback in the log file under RAGCHAT_HOME."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.settings import PROJECT_ROOT
from providers.packaged_models import PACKAGED_EMBEDDER_FOLDER, PACKAGED_GGUFS, ensure_embedder_folder, ensure_gguf
from tests.conftest import TEST_LLM

CONFIGURED = "qwen2.5-coder-1.5b"
CLOSED = "http://127.0.0.1:9"  # no Ollama: auto falls back to the embedded model


def only_the_test_model(tmp_path: Path) -> dict[str, str]:
    """An environment where the only packaged LLM is the 0.5B: a model dir holding it and the embedder,
    and the 1.5B's part packages hidden from the process (a `sitecustomize` marks them as not
    importable), as on a machine where only `make test` ran."""
    models = tmp_path / "models"
    models.mkdir()
    cache = Path.home() / ".cache" / "ragchat" / "models"
    (models / PACKAGED_GGUFS[TEST_LLM].filename).symlink_to(ensure_gguf(TEST_LLM, cache))
    (models / PACKAGED_EMBEDDER_FOLDER).symlink_to(ensure_embedder_folder(cache), target_is_directory=True)
    hide = tmp_path / "hide"
    hide.mkdir()
    big = PACKAGED_GGUFS[CONFIGURED]
    names = [f"{big.module_prefix}{i}" for i in range(1, big.parts + 1)]
    (hide / "sitecustomize.py").write_text(f"import sys\nfor name in {names!r}:\n    sys.modules[name] = None\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_")}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(hide), str(PROJECT_ROOT)]),
        "RAGCHAT_HOME": str(tmp_path / "home"),
        "RAGCHAT_MODEL_DIR": str(models),
        "RAGCHAT_RERANKER_DIR": str(tmp_path / "flashrank"),
        "OLLAMA_HOST": CLOSED,
    }
    return env


def ragchat(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "ragchat"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=env["RAGCHAT_HOME"].removesuffix("home"),
    )


def test_the_installed_model_answers_when_the_configured_one_is_missing(tmp_path: Path) -> None:
    env = only_the_test_model(tmp_path)
    ingest = ragchat(env, "ingest", str(PROJECT_ROOT / "sample_docs" / "returns_policy.txt"), "--json")
    assert ingest.returncode == 0, ingest.stderr
    started = time.monotonic()
    asked = ragchat(env, "ask", "How many days do I have to return an item?", "--json")
    seconds = time.monotonic() - started
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert not answer["refused"] and answer["answer"].strip()
    assert TEST_LLM in answer["models"]["llm"] and CONFIGURED not in answer["models"]["llm"]
    fallback = answer["models"]["llm_fallback"]
    assert CONFIGURED in fallback and TEST_LLM in fallback and "`make models-app`" in fallback
    # Said once on stderr, one line, no traceback.
    assert asked.stderr.strip() == f"ragchat: {fallback}", asked.stderr
    assert seconds < 300


def test_with_no_packaged_model_the_error_is_one_line_that_says_what_to_run(tmp_path: Path) -> None:
    env = only_the_test_model(tmp_path)
    (Path(env["RAGCHAT_MODEL_DIR"]) / PACKAGED_GGUFS[TEST_LLM].filename).unlink()
    small = PACKAGED_GGUFS[TEST_LLM]
    hidden = [f"{small.module_prefix}{i}" for i in range(1, small.parts + 1)]
    site = Path(env["PYTHONPATH"].split(os.pathsep)[0]) / "sitecustomize.py"
    site.write_text(site.read_text() + f"for name in {hidden!r}:\n    sys.modules[name] = None\n")
    assert ragchat(env, "ingest", str(PROJECT_ROOT / "sample_docs" / "returns_policy.txt")).returncode == 0
    asked = ragchat(env, "ask", "How many days do I have to return an item?", "--json")
    assert asked.returncode == 1 and asked.stdout == ""
    assert asked.stderr.count("\n") == 1 and "Traceback" not in asked.stderr
    assert "No packaged language model is installed" in asked.stderr and "`make models-app`" in asked.stderr


def test_an_unexpected_error_is_one_line_and_its_traceback_goes_to_the_log(tmp_path: Path) -> None:
    env = only_the_test_model(tmp_path)
    home = Path(env["RAGCHAT_HOME"])
    home.mkdir()
    (home / "ragchat.sqlite3").write_bytes(b"this is not a database" * 100)
    listed = ragchat(env, "docs", "--json")
    log = home / "logs" / "ragchat.log"
    assert listed.returncode == 1 and listed.stdout == ""
    assert listed.stderr.count("\n") == 1 and "Traceback" not in listed.stderr
    assert "not a database" in listed.stderr and f"details in {log}" in listed.stderr
    assert "Traceback (most recent call last)" in log.read_text()


def test_the_app_says_which_installed_model_answers_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = only_the_test_model(tmp_path)
    for name in ("RAGCHAT_HOME", "RAGCHAT_MODEL_DIR", "RAGCHAT_RERANKER_DIR", "OLLAMA_HOST"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.delenv("RAGCHAT_LLM_MODEL", raising=False)
    monkeypatch.delenv("RAGCHAT_LLM_PROVIDER", raising=False)
    big = PACKAGED_GGUFS[CONFIGURED]
    for i in range(1, big.parts + 1):
        monkeypatch.setitem(sys.modules, f"{big.module_prefix}{i}", None)  # as the sitecustomize does
    assert importlib.util.find_spec(f"{big.module_prefix}1") is None
    st.cache_resource.clear()
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception
    notes = [c.value for c in at.sidebar.caption if CONFIGURED in c.value and "is not installed, so" in c.value]
    assert notes == [
        f"{CONFIGURED} is not installed, so {TEST_LLM} answers; run `make models-app` to install {CONFIGURED}."
    ]
    assert at.sidebar.selectbox(key="llm_choice").value == f"llamacpp:{TEST_LLM}"
