"""The process's heap: memory freed on another thread goes back to the system, and threads share
a bounded number of malloc arenas."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ragchat.cli
import ragchat.cli.app
import ragchat.process_models
from bench.rss_sampler import rss_mib
from core.heap import give_back_free_memory, with_arena_limit
from core.settings import get_settings


def test_freed_memory_of_another_thread_goes_back() -> None:
    kept: list[bytearray] = []

    def allocate_then_free_most() -> None:
        blocks = [bytearray(1500) for _ in range(100_000)]  # ~150 MiB from malloc, not Python's small-object pool
        kept.extend(blocks[::100])  # a few stay, so the arena's top is not free and malloc keeps the rest

    thread = threading.Thread(target=allocate_then_free_most)
    thread.start()
    thread.join()
    held = rss_mib()
    assert give_back_free_memory()
    assert held - rss_mib() > 60, "malloc_trim returned less than half of what was freed"
    assert len(kept) == 1000


REPO = Path(__file__).resolve().parents[2]

# Six threads allocate at once in a fresh interpreter (the suite's own process fixed its arena limit
# long ago); malloc_info then lists one <heap> per arena.
ARENAS_CHILD = """
import ctypes, re, sys, tempfile, threading
from core.heap import limit_malloc_arenas
limit_malloc_arenas(int(sys.argv[1]))
kept, start = [], threading.Barrier(6)
def allocate():
    start.wait()
    kept.append([bytearray(2000) for _ in range(2000)])
threads = [threading.Thread(target=allocate) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc = ctypes.CDLL("libc.so.6")
libc.fopen.restype = ctypes.c_void_p
with tempfile.NamedTemporaryFile("r", suffix=".xml") as report:
    stream = ctypes.c_void_p(libc.fopen(report.name.encode(), b"w"))
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    print(len(re.findall("<heap nr=", report.read())))
"""


def _arenas_after_six_threads(limit: int) -> int:
    child = subprocess.run(
        [sys.executable, "-c", ARENAS_CHILD, str(limit)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(child.stdout)


def test_threads_share_the_arenas_the_limit_allows() -> None:
    assert _arenas_after_six_threads(0) >= 4  # glibc's default: an arena per allocating thread
    assert _arenas_after_six_threads(2) == 2


def test_the_process_limits_its_arenas_before_loading_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    monkeypatch.setattr(ragchat.process_models, "limit_malloc_arenas", asked.append)
    models = ragchat.process_models.ProcessModels(get_settings(home=tmp_path, malloc_arenas=3))
    assert asked == [3]
    assert models.llm_label == "not loaded yet"


def test_a_child_started_before_our_code_gets_the_limit_in_its_environment() -> None:
    assert with_arena_limit({"PATH": "/bin"}, 2) == {"PATH": "/bin", "MALLOC_ARENA_MAX": "2"}
    assert with_arena_limit({"MALLOC_ARENA_MAX": "4"}, 2) == {"MALLOC_ARENA_MAX": "4"}  # the user's wins
    assert with_arena_limit({"PATH": "/bin"}, 0) == {"PATH": "/bin"}  # 0: glibc's default


def test_ragchat_ui_starts_streamlit_with_the_arena_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[dict[str, str]] = []
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setenv("RAGCHAT_MALLOC_ARENAS", "3")
    monkeypatch.setattr(ragchat.cli.app.subprocess, "call", lambda command, env: started.append(env) or 0)
    assert ragchat.cli.main(["ui", "--port", "8599"]) == 0
    assert started[0]["MALLOC_ARENA_MAX"] == "3"
