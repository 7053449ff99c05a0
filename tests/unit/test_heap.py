"""Memory freed on another thread goes back to the system when the ingest worker falls idle."""

from __future__ import annotations

import threading

from bench.rss_sampler import rss_mib
from core.heap import give_back_free_memory


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
