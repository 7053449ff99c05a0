"""Run a Python module in a short-lived subprocess with hard limits, JSON in on stdin, JSON out on stdout.

What the app process guarantees, whatever the child does:
- wall clock: the child (its whole process group) is killed at `wall_s`; the caller never waits longer;
- output: more than `output_bytes` on stdout kills it; stderr keeps only its last 64 KiB (for the log);
- the result is parsed here; anything but a clean exit with one JSON document is a SandboxError.
What the kernel enforces, set by the child's first statements before any tool code is imported
(no Python runs between fork and exec, which would be unsafe in the multi-threaded app):
- RLIMIT_CPU (SIGXCPU, then SIGKILL one second later), RLIMIT_AS (allocation fails → MemoryError,
  reported as exit code MEMORY_EXIT), no core dumps.
The child starts with `python -I` (no PYTHON* variables, no user site-packages, no current directory on
sys.path), in an empty temporary directory, with an environment of PATH, a UTF-8 locale and the TLS CA
bundle variables only: API keys, tokens and proxy credentials of the app are not inherited.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Literal

from core.settings import PROJECT_ROOT

MEMORY_EXIT = 86
STDERR_TAIL_BYTES = 64 * 1024
# Variables passed through: where the TLS trust store is. Nothing else of the app's environment is.
PASSED_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE")

_BOOTSTRAP = f"""\
import os, resource, runpy, sys
cpu, memory, root, module = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
sys.path.insert(0, root)
sys.argv = [module]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except MemoryError:
    os.write(2, b"MemoryError\\n")
    os._exit({MEMORY_EXIT})
"""

SandboxErrorKind = Literal["timeout", "cpu", "memory", "output", "crashed"]


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float
    cpu_s: int
    memory_bytes: int
    output_bytes: int = 16 * 1024 * 1024


class SandboxError(RuntimeError):
    """The child was stopped or returned nothing usable; the message says which limit and its value."""

    def __init__(self, kind: SandboxErrorKind, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.kind: SandboxErrorKind = kind
        self.stderr = stderr


def run_module(module: str, payload: Any, limits: SandboxLimits, what: str = "the tool") -> Any:
    """Run `python -m module` in the sandbox with `payload` as JSON on stdin; its stdout parsed as JSON."""
    command = [
        sys.executable,
        "-I",
        "-c",
        _BOOTSTRAP,
        str(limits.cpu_s),
        str(limits.memory_bytes),
        str(PROJECT_ROOT),
        module,
    ]
    data = json.dumps(payload).encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="ragchat-sandbox-") as workdir:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=clean_environment(),
            start_new_session=True,  # its own process group: a kill takes its children too
        )
        try:
            stdout, stderr = _exchange(process, data, limits, what)
        finally:
            _kill_group(process)
    return _result(process.returncode, stdout, stderr, limits, what)


def clean_environment() -> dict[str, str]:
    env = {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.update({name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ})
    return env


def _exchange(process: subprocess.Popen[bytes], data: bytes, limits: SandboxLimits, what: str) -> tuple[bytes, bytes]:
    """Feed stdin, collect stdout/stderr until both close and the child exits, or a limit is hit."""
    assert process.stdin and process.stdout and process.stderr
    deadline = time.monotonic() + limits.wall_s
    stdout, stderr = bytearray(), bytearray()
    pending = memoryview(data)
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, stdout)
        selector.register(process.stderr, selectors.EVENT_READ, stderr)
        os.set_blocking(process.stdin.fileno(), False)
        selector.register(process.stdin, selectors.EVENT_WRITE, None)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _timeout(limits, what)
            for key, _ in selector.select(remaining):
                if key.data is None:  # stdin is writable
                    try:
                        pending = pending[os.write(key.fd, pending) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(key.fileobj)
                        process.stdin.close()
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if key.data is stdout and len(stdout) > limits.output_bytes:
                    message = f"{what} wrote more than {limits.output_bytes:,} bytes and was stopped"
                    raise SandboxError("output", message)
                if key.data is stderr and len(stderr) > STDERR_TAIL_BYTES:
                    del stderr[: len(stderr) - STDERR_TAIL_BYTES]
    # Both pipes are closed; wait for the exit without reaping, so the group id stays ours to kill.
    while os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() >= deadline:
            raise _timeout(limits, what)
        time.sleep(0.005)
    return bytes(stdout), bytes(stderr)


def _timeout(limits: SandboxLimits, what: str) -> SandboxError:
    return SandboxError("timeout", f"{what} took longer than {limits.wall_s:g} s and was stopped")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's process group, then reap the child. The child is not reaped before this
    point (see _exchange), so its id still names our group and cannot belong to another process."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream and not stream.closed:
            stream.close()


def _result(returncode: int, stdout: bytes, stderr: bytes, limits: SandboxLimits, what: str) -> Any:
    err = stderr.decode("utf-8", "replace")
    if returncode == MEMORY_EXIT or (returncode != 0 and "MemoryError" in err):
        mib = limits.memory_bytes // (1024 * 1024)
        raise SandboxError("memory", f"{what} needed more than its {mib} MiB memory limit and was stopped", err)
    if returncode == -signal.SIGXCPU:
        raise SandboxError("cpu", f"{what} used more than {limits.cpu_s} s of CPU time and was stopped", err)
    if returncode == -signal.SIGKILL:
        message = f"{what} was killed (its {limits.cpu_s} s CPU limit, or the system ran out of memory)"
        raise SandboxError("cpu", message, err)
    if returncode != 0:
        last = next((line for line in reversed(err.strip().splitlines()) if line.strip()), "")
        detail = f": {last[:200]}" if last else ""
        raise SandboxError("crashed", f"{what} stopped unexpectedly (exit code {returncode}){detail}", err)
    try:
        return json.loads(stdout)
    except ValueError:
        raise SandboxError("output", f"{what} did not return valid JSON", err) from None
