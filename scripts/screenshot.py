"""Make the README screenshot (docs/screenshot.png) of the Streamlit app answering a question.

The script indexes the sample report PDF (tests.fixtures) and a small Markdown note into a temporary
RAGCHAT_HOME, starts `streamlit run app.py` on a free local port with the embedded llama.cpp model,
asks the Westland Q2 revenue question in a headless Chromium driven by Playwright, opens the Sources
expander once the answer is complete and saves a full-page screenshot.

Run from the repository root:

    .venv/bin/python -m scripts.screenshot [--model qwen2.5-coder-1.5b] [--output docs/screenshot.png]

Playwright never downloads a browser here: it drives the system Chromium (default /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from playwright.sync_api import expect, sync_playwright

from ragchat.service import RagService
from ragchat.settings import PROJECT_ROOT, get_settings
from tests.fixtures import write_report_pdf

QUESTION = "What was the Q2 revenue of the Westland region?"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_OUTPUT = PROJECT_ROOT / "docs" / "screenshot.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 900}
HEALTH_TIMEOUT_S = 60
ANSWER_TIMEOUT_S = 240

NOTES_MD = """# Warehouse safety notes

## Forklifts
Only certified operators may drive a forklift. The certification takes two days and is renewed every
three years.

## Loading docks
Dock doors stay closed while no truck is parked. Wheel chocks are placed before loading starts.
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare_home(home: Path) -> None:
    """Index the sample documents into `home`, as the sidebar upload would."""
    service = RagService(get_settings(home=home))
    pdf = write_report_pdf(home.parent / "report.pdf").read_bytes()
    for name, data in [("report.pdf", pdf), ("safety-notes.md", NOTES_MD.encode())]:
        result = service.ingest_bytes(name, data)
        print(f"indexed {result.source}: {result.status} ({result.chunks} chunks)", flush=True)
        if result.status == "failed":
            raise SystemExit(f"indexing {name} failed: {result.error}")


def start_streamlit(home: Path, model: str, port: int, log_path: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "RAGCHAT_HOME": str(home),
        "RAGCHAT_LLM_PROVIDER": "llamacpp",
        "RAGCHAT_LLM_MODEL": model,
    }
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        # No "Deploy" button in the picture: a README shows the app, not Streamlit's developer toolbar.
        "--client.toolbarMode",
        "minimal",
    ]
    with log_path.open("wb") as log:
        return subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_healthy(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"streamlit exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            if requests.get(f"{url}/_stcore/health", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(1)
    raise SystemExit(f"streamlit was not healthy after {HEALTH_TIMEOUT_S} s:\n{log_path.read_text()}")


def take_screenshot(url: str, output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url)
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar.get_by_text("report.pdf", exact=True)).to_be_visible(timeout=60_000)

            chat_input = page.get_by_test_id("stChatInputTextArea")
            expect(chat_input).to_be_enabled(timeout=30_000)
            chat_input.fill(QUESTION)
            chat_input.press("Enter")
            print("question sent, waiting for the answer", flush=True)

            sources = page.get_by_test_id("stExpander").filter(has_text="Sources")
            expect(sources).to_be_visible(timeout=ANSWER_TIMEOUT_S * 1000)
            sources.locator("summary").click()
            page.wait_for_timeout(1000)
            page.screenshot(path=str(output), full_page=True)
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"packaged llama.cpp model (default {DEFAULT_MODEL})")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where the PNG is written")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="ragchat-screenshot-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        prepare_home(home)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log_path = Path(tmp) / "streamlit.log"
        process = start_streamlit(home, args.model, port, log_path)
        try:
            wait_healthy(process, url, log_path)
            take_screenshot(url, args.output)
        except BaseException:
            print(log_path.read_text(errors="replace")[-4000:], file=sys.stderr)
            raise
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
