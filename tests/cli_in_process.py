"""`ragchat ARGS` run by the CLI's `main` in the test's process, with its exit code and output.

A test's model is then the one the other tests of its process share (tests/conftest.py) instead of one
loaded per command, and no interpreter starts (the imports alone cost ~2 s of CPU per command). The
CLI as a process of its own, with its exit code and output, is what test_many_processes.py,
test_ingest_kill.py, test_kill_points.py (the killed ingest), test_trust.py (a rate limit across
processes) and test_installed_model.py run."""

from __future__ import annotations

import contextlib
import io
import subprocess

from ragchat.cli.program import main


def ragchat(*args: str) -> subprocess.CompletedProcess[str]:
    """`ragchat ARGS`: its exit code, and what it wrote to stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["ragchat", *args], code, out.getvalue(), err.getvalue())
