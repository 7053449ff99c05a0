"""Embedded Chroma: what another process wrote, seen by this one without a restart.

chromadb keeps one System per database path in a process, and that System holds the vector index in
memory: after another process adds vectors (a `ragchat ingest` beside the app), this process's
queries miss them and reading them by id fails ("Error finding id"), however many clients it opens.
The database file changes on every write, by any process. A path's `View` keeps the file's
signature as this process last left it (opened, or written by itself); a call that finds it changed
drops the path's System from chromadb's cache, and every store of the path in this process reopens
on a fresh one before its next call. The lock keeps a write and the signature taken after it
together, so this process never mistakes its own write for another's, nor another's for its own."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

DATABASE_FILE = "chroma.sqlite3"


@dataclass
class View:
    """One database path as this process sees it."""

    path: Path
    lock: threading.RLock = field(default_factory=threading.RLock)
    signature: tuple[int, int, int] | None = None  # the file after this process's last open or write
    generation: int = 0  # how many times this process replaced the path's System
    opened: bool = False  # a store of this path was opened in this process

    def current(self) -> tuple[int, int, int] | None:
        try:
            stat = (self.path / DATABASE_FILE).stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def catch_up(self, identifier: str) -> int:
        """The generation a store of this path must be on: a new one when another process wrote since
        this one last looked. The caller holds the lock."""
        now = self.current()
        if now != self.signature:
            from chromadb.api.shared_system_client import SharedSystemClient

            # The next client made for the path starts a fresh System; the old one is left to the
            # stores still holding it, which move on their next call (no chromadb API drops one System).
            SharedSystemClient._identifier_to_system.pop(identifier, None)
            self.signature = now
            self.generation += 1
        return self.generation

    def first_open(self) -> None:
        """The first client of the path in this process has just started its System, which read the
        file as it is now (starting it may have written to it). The caller holds the lock."""
        if not self.opened:
            self.opened = True
            self.signature = self.current()

    def wrote(self) -> None:
        """This process wrote: the file as it is now is its own doing. The caller holds the lock."""
        self.signature = self.current()


_VIEWS: dict[Path, View] = {}
_VIEWS_LOCK = threading.Lock()


def view_of(path: Path) -> View:
    """The one View of this database path in this process."""
    key = path.resolve()
    with _VIEWS_LOCK:
        view = _VIEWS.get(key)
        if view is None:
            view = _VIEWS[key] = View(key)
        return view
