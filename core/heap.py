"""Keep the process's heap from holding memory it no longer uses.

glibc's malloc gives each thread that allocates an arena of its own (up to 8 per core) and keeps what
a thread frees in that thread's arena, for reuse, returning it only when the top of the arena is free.
An ingest parses and embeds on its threads while searches and answers run on others, so the process
held memory it no longer used:
- four PDF ingests beside searches took it from 590 to 731 MiB, and malloc_trim brought it back to
  594: the ingest worker gives freed memory back when it falls idle;
- over a 4-user soak RSS still rose 8.6–11.2% after warm-up; with the process limited to 2 arenas,
  freed memory is reused by every thread and it rose 6.2–6.7%, at the same speed (bench/soak.py,
  bench/results-soak.md).
Elsewhere (macOS, musl) both do nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping
from functools import lru_cache

M_ARENA_MAX = -8  # mallopt's parameter number, from glibc's malloc.h


@lru_cache(maxsize=1)
def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None


def _glibc_function(name: str) -> Callable[..., int] | None:
    libc = _glibc()
    return getattr(libc, name, None) if libc is not None else None


def with_arena_limit(environment: Mapping[str, str], arenas: int) -> dict[str, str]:
    """`environment` for a child process that starts its threads before our code runs (Streamlit's
    server: by the time app.py runs, more than 8 arenas exist and `limit_malloc_arenas` is too late).
    glibc reads MALLOC_ARENA_MAX when the process starts; one the user set is kept."""
    child = dict(environment)
    if arenas > 0:
        child.setdefault("MALLOC_ARENA_MAX", str(arenas))
    return child


def limit_malloc_arenas(arenas: int) -> bool:
    """Let malloc create no more than `arenas` arenas from now on (0 leaves glibc's default); False
    where malloc cannot. Call it before the process starts its threads: glibc fixes the limit the
    first time it needs it, once more than 8 arenas exist, and ignores a later change."""
    mallopt = _glibc_function("mallopt")
    if mallopt is None or arenas == 0:
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))


def give_back_free_memory() -> bool:
    """Return the free pages of every malloc arena to the system; False where malloc cannot."""
    trim = _glibc_function("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True
