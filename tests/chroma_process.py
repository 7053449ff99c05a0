"""A real Chroma server for tests and benchmarks: `chroma run` from the chromadb package installed in
this virtual environment, on 127.0.0.1 and a free port, stopped for sure afterwards."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0


def chroma_program() -> Path:
    """The `chroma` console script installed with chromadb, next to this interpreter."""
    program = Path(sys.executable).parent / "chroma"
    if not program.exists():
        raise FileNotFoundError(f"{program} is missing: is chromadb installed in this environment?")
    return program


def free_port() -> int:
    """A port nothing listens on right now (bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ChromaServer:
    """`chroma run --path PATH --host 127.0.0.1 --port PORT`; start() waits for its heartbeat, stop()
    ends its process group (SIGTERM, then SIGKILL). Restartable on the same path and port."""

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path = path
        self.port = port or free_port()
        self.log_path = path.parent / f"chroma-{self.port}.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        command = [str(chroma_program()), "run", "--path", str(self.path), "--host", "127.0.0.1"]
        command += ["--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self._process.returncode}: {self._log_tail()}")
            try:
                if httpx.get(f"{self.url}api/v2/heartbeat", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"chroma run gave no heartbeat within {START_TIMEOUT_S:g} s: {self._log_tail()}")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_TIMEOUT_S)
        except ProcessLookupError:  # it ended between the poll and the signal
            process.wait(timeout=STOP_TIMEOUT_S)

    def _log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
