"""Misbehaving children for the sandbox tests, run as `python -m tests.sandbox_children` inside it.

stdin is {"action": ..., ...}; each action is one way a tool can go wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> None:
    job = json.load(sys.stdin)
    action = job["action"]
    if action == "echo":
        print(json.dumps({"echo": job, "cwd": os.getcwd()}))
    elif action == "environment":
        print(json.dumps({"environ": dict(os.environ), "path": sys.path, "flags": sys.flags.isolated}))
    elif action == "sleep":
        # A grandchild too: the kill must take the whole process group.
        grandchild = subprocess.Popen(["sleep", "60"])
        with open(job["pid_file"], "w") as handle:
            json.dump({"child": os.getpid(), "grandchild": grandchild.pid}, handle)
        time.sleep(60)
    elif action == "allocate":
        blocks = [bytearray(64 * 1024 * 1024) for _ in range(job["blocks"])]
        print(json.dumps({"allocated": len(blocks)}))
    elif action == "spin":
        while True:
            pass
    elif action == "flood":
        chunk = "x" * 65536
        while True:
            sys.stdout.write(chunk)
    elif action == "not_json":
        print("hello, not JSON")
    elif action == "crash":
        raise ValueError("the tool broke on purpose")


if __name__ == "__main__":
    main()
