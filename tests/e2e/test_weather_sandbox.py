"""The sandbox's limits, each hit for real by a misbehaving child (tests/sandbox_children.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tools.sandbox import SandboxError, SandboxLimits, run_module

CHILD = "tests.sandbox_children"
MIB = 1024 * 1024
LIMITS = SandboxLimits(wall_s=10, cpu_s=5, memory_bytes=256 * MIB)


def stopped(payload: dict[str, object], limits: SandboxLimits = LIMITS) -> SandboxError:
    with pytest.raises(SandboxError) as caught:
        run_module(CHILD, payload, limits)
    return caught.value


def gone(pid: int, within_s: float = 5.0) -> bool:
    """True once `pid` no longer runs (absent, or a zombie waiting for init to reap it)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_json_in_json_out_in_an_empty_directory() -> None:
    result = run_module(CHILD, {"action": "echo", "text": "São Paulo"}, LIMITS)
    assert result["echo"] == {"action": "echo", "text": "São Paulo"}
    assert Path(result["cwd"]).name.startswith("ragchat-sandbox-")
    assert not Path(result["cwd"]).exists()  # removed afterwards


def test_no_secrets_are_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCHAT_OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "also-secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pw@proxy.example:3128")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    result = run_module(CHILD, {"action": "environment"}, LIMITS)
    assert set(result["environ"]) <= {"PATH", "LANG", "LC_ALL", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"}
    assert "secret" not in json.dumps(result)
    assert result["flags"] == 1  # python -I: PYTHON* variables and the user site are ignored
    assert "/somewhere/else" not in result["path"]


def test_a_child_sleeping_past_the_wall_clock_is_killed_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids.json"
    started = time.monotonic()
    error = stopped({"action": "sleep", "pid_file": str(pid_file)}, SandboxLimits(1.0, 5, 256 * MIB))
    assert time.monotonic() - started < 3.0
    assert error.kind == "timeout"
    assert str(error) == "the tool took longer than 1 s and was stopped"
    pids = json.loads(pid_file.read_text())
    assert gone(pids["child"]) and gone(pids["grandchild"])


def test_hitting_the_memory_cap_is_a_clear_error() -> None:
    error = stopped({"action": "allocate", "blocks": 8})  # 512 MiB against a 256 MiB cap
    assert error.kind == "memory"
    assert str(error) == "the tool needed more than its 256 MiB memory limit and was stopped"
    # The same work fits under a larger cap: it was the limit, not the code.
    assert run_module(CHILD, {"action": "allocate", "blocks": 2}, LIMITS) == {"allocated": 2}


def test_a_busy_loop_is_stopped_by_the_cpu_limit() -> None:
    started = time.monotonic()
    error = stopped({"action": "spin"}, SandboxLimits(wall_s=20, cpu_s=1, memory_bytes=256 * MIB))
    assert error.kind == "cpu" and "1 s of CPU time" in str(error)
    assert time.monotonic() - started < 10


def test_too_much_output_is_cut_off() -> None:
    error = stopped({"action": "flood"}, SandboxLimits(10, 5, 256 * MIB, output_bytes=MIB))
    assert error.kind == "output" and "more than 1,048,576 bytes" in str(error)


def test_output_that_is_not_json_or_a_crash_is_reported_in_one_line() -> None:
    assert str(stopped({"action": "not_json"})) == "the tool did not return valid JSON"
    crash = stopped({"action": "crash"})
    assert crash.kind == "crashed"
    assert str(crash) == "the tool stopped unexpectedly (exit code 1): ValueError: the tool broke on purpose"
    assert "Traceback" in crash.stderr  # the full story is kept for the log, not shown
