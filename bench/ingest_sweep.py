"""Robustness sweep: ingest every real PDF in ../shared/data/pdfs (or --dir) and print, per file, the
status, pages, chunks, seconds, peak memory and the message a user would see.

Each file is ingested in its own fresh process (so "peak MB" is that ingest's peak RSS, models
included) into one temporary RAGCHAT_HOME that is deleted afterwards. Files with a known password
(see PASSWORDS) are ingested twice: without it (a clear "password" failure is expected) and with it.
Nothing is asserted; the folder missing is reported and the script exits 0.

    .venv/bin/python bench/ingest_sweep.py
    .venv/bin/python bench/ingest_sweep.py --dir ~/pdfs --json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from core.settings import PROJECT_ROOT

DEFAULT_DIR = PROJECT_ROOT.parent / "shared" / "data" / "pdfs"
# Passwords documented in the data folder's README.
PASSWORDS = {"enc_pdfplumber_userpw_test.pdf": "test"}


def ingest_one(path: Path, home: Path, password: str | None) -> dict[str, object]:
    """Run one ingest in a child process, which reports its own peak RSS."""
    code = (
        "import json, resource, sys, time\n"
        "from ragchat.application import open_session\n"
        "from core.settings import get_settings\n"
        "session = open_session(get_settings())\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "started = time.perf_counter()\n"
        "r = session.ingest_bytes(sys.argv[1], data, password=sys.argv[2] or None)\n"
        "seconds = time.perf_counter() - started\n"
        "peak_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
        "print(json.dumps({**r.model_dump(mode='json'), 'seconds': seconds, 'peak_mb': peak_mb}))\n"
    )
    env = {**os.environ, "RAGCHAT_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), password or ""], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        last = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return {"source": path.name, "status": "crashed", "error": last[0], "peak_mb": None}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"folder of PDFs (default {DEFAULT_DIR})")
    parser.add_argument("--json", action="store_true", help="one JSON line per ingest instead of the table")
    args = parser.parse_args()
    if not args.dir.is_dir():
        print(f"No folder {args.dir}: nothing to sweep (the data lives outside the repository).")
        return
    files = sorted(p for p in args.dir.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)", file=sys.stderr)
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="ragchat-sweep-") as tmp:
        home = Path(tmp) / "home"
        for path in files:
            attempts = [None, PASSWORDS[path.name]] if path.name in PASSWORDS else [None]
            for password in attempts:
                row = ingest_one(path, home, password)
                row["file"] = path.name + (" (with its password)" if password else "")
                rows.append(row)
                if args.json:
                    print(json.dumps(row, ensure_ascii=False), flush=True)
    if args.json:
        return
    print(f"{'file':<46} {'status':<9} {'pages':>5} {'chunks':>6} {'seconds':>8} {'peak MB':>8}  message")
    print("-" * 140)
    for row in rows:
        message = row.get("error") or "; ".join(row.get("warnings") or [])  # type: ignore[arg-type]
        print(
            f"{row['file']:<46} {row['status']!s:<9} {row.get('pages', 0):>5} {row.get('chunks', 0):>6} "
            f"{float(row.get('seconds') or 0):>8.2f} {row['peak_mb']!s:>8}  {message}"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
