"""The real app as a person runs it: `streamlit run app.py` on a free 127.0.0.1 port, in its own
process, with the environment the test chooses; and the headless Debian Chromium that drives it.

Playwright never downloads a browser here: it launches the system Chromium (`apt-get install
chromium`, which `make browser` does) with a fresh profile and no background networking.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from playwright.sync_api import Browser, Playwright

from core.settings import PROJECT_ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MISSING_CHROMIUM = (
    f"Chromium is not installed at {CHROMIUM}; the browser tests drive Debian's chromium and never download "
    "one. Install it with `make browser` (as root it runs `apt-get install -y --no-install-recommends chromium`)."
)
HEALTH_TIMEOUT_S = 90
STOP_TIMEOUT_S = 15


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_app(env: dict[str, str], workdir: Path, log_path: Path) -> Iterator[str]:
    """Start the app, wait (bounded) until /_stcore/health answers, yield its URL, stop it.

    The working directory is a temporary one, so no stray `.env` of the checkout changes the settings;
    Streamlit still reads `.streamlit/config.toml` next to app.py, as it does for `make run`.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PROJECT_ROOT / "app.py"),
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
    ]
    with log_path.open("wb") as log:
        # Its own process group, so stopping it also stops what it started (the weather sandbox).
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(process, url, log_path)
        yield url
    finally:
        stop(process)


def wait_healthy(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}:\n{tail(log_path)}")
        try:
            if requests.get(f"{url}/_stcore/health", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"streamlit was not healthy after {HEALTH_TIMEOUT_S} s:\n{tail(log_path)}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the app's process group (Streamlit and anything it started), SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def tail(log_path: Path, chars: int = 6000) -> str:
    return log_path.read_text(errors="replace")[-chars:] if log_path.exists() else "(no log)"


def launch_chromium(playwright: Playwright) -> Browser:
    """Headless Debian Chromium. Playwright's launch() starts it with a fresh temporary profile
    (its own --user-data-dir); a BrowserContext per test keeps the tests' pages apart."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
