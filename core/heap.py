"""Give memory the process freed back to the operating system.

glibc's malloc keeps what a thread frees in that thread's arena, for reuse, and returns it only when
the top of the arena is free. An ingest parses and embeds on its threads while searches and answers
run on others, so after a few uploads the process held memory it no longer used: four PDF ingests
beside searches took it from 590 to 731 MiB, and malloc_trim brought it back to 594 (bench/soak.py,
bench/results-soak.md). Elsewhere (macOS, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None
    return getattr(libc, "malloc_trim", None)


def give_back_free_memory() -> bool:
    """Return the free pages of every malloc arena to the system; False where malloc cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
