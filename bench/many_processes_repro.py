"""The many-processes repro, as a new user would run it: in a fresh RAGCHAT_HOME with one small file
indexed, a long `ragchat ingest` starts; `--delay` seconds later a second process searches; after the
ingest ends, a search and an ask run. Prints each step's exit code and its first stderr lines.

Run it against any checkout (e.g. a worktree of an older commit) to compare before and after:
    .venv/bin/python bench/many_processes_repro.py --pages 600 --delay 20 [--repo /tmp/before]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures import long_pdf_bytes


def show(step: str, result: subprocess.CompletedProcess[str]) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    print(f"## {step}: exit {result.returncode}, stdout {len(result.stdout)} chars")
    for line in lines[:4] + (["…", lines[-1]] if len(lines) > 4 else []):
        print(f"    {line[:200]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--delay", type=float, default=20.0)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}; repo {args.repo}")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        env = {**os.environ, "RAGCHAT_HOME": str(work / "home"), "RAGCHAT_LLM_MODEL": "qwen2.5-coder-0.5b"}

        def ragchat(*argv: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "ragchat.cli", *argv]
            return subprocess.run(command, cwd=args.repo, env=env, capture_output=True, text=True, timeout=3600)

        (work / "small.txt").write_text("The forklift certification is renewed every two years.", encoding="utf-8")
        (work / "manual.pdf").write_bytes(long_pdf_bytes(args.pages, seed=5, marker="kilroy"))
        show("ingest small.txt", ragchat("ingest", str(work / "small.txt"), "--json"))
        started = time.monotonic()
        writer = subprocess.Popen(
            [sys.executable, "-m", "ragchat.cli", "ingest", str(work / "manual.pdf"), "--json"],
            cwd=args.repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(args.delay)
        show(
            f"search during the ingest (t={time.monotonic() - started:.0f} s)", ragchat("search", "forklift", "--json")
        )
        out, err = writer.communicate(timeout=3600)
        show(
            f"the ingest itself (ended t={time.monotonic() - started:.0f} s)",
            subprocess.CompletedProcess([], writer.returncode, out, err),
        )
        show("search after the ingest", ragchat("search", "kilroy", "--json"))
        show("ask after the ingest", ragchat("ask", "How often is the forklift certification renewed?", "--json"))


if __name__ == "__main__":
    main()
