"""One writer at a time per document index, across processes.

Ingest, delete, rebuild and crash recovery hold the index's write lock; search, ask, docs and export
never take it and never write. The lock is an fcntl lock on a file (through filelock, already used
for the memory files): the kernel drops it when its process dies, even by SIGKILL, so a killed
ingest never leaves the index locked. SQLite's own locking was the alternative, but it guards one
database file while a write here spans three stores (Chroma, BM25 files, the registry), and a
transaction held open for a ten-minute ingest would also block the readers' registry reads.

The holder publishes what it is doing, and how far it got, in a JSON file beside the lock, so a
second writer can say what it waits for ("waiting for the ingest of manual.pdf in another process
(pid 4242), 41%"). Within one process the lock is shared by its threads: the app's Delete does not
wait for the same app's running ingest (the indexer keeps those apart itself); the file lock is
released when the last write of the process ends.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel, Field, ValidationError

from ingestion.registry import process_alive

PROGRESS_EVERY_S = 1.0  # how often the holder rewrites its progress file at most


class WriterInfo(BaseModel):
    """What the process holding the write lock said it is doing."""

    pid: int
    what: str
    source: str | None = Field(default=None, description="The document it writes, when it writes one.")
    fraction: float | None = None
    started_at: float

    def describe(self) -> str:
        done = f", {self.fraction:.0%}" if self.fraction is not None else ""
        return f"{self.what} in another process (pid {self.pid}){done}"


class WriterBusy(RuntimeError):
    """Another process is writing this index and the caller chose not to wait; the message says who."""


WaitListener = Callable[[WriterInfo | None], None]


class WriteLock:
    def __init__(self, path: Path) -> None:
        """`path`: the lock file; the holder's progress goes to the same name with `.json`."""
        self.path = path
        self.info_path = path.with_suffix(".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file_lock = FileLock(str(path), thread_local=False)
        self._guard = threading.Lock()
        self._holders = 0
        self._what = ""
        self._source: str | None = None
        self._started = 0.0
        self._last_progress = 0.0

    @contextmanager
    def hold(
        self,
        what: str,
        wait: bool = True,
        on_wait: WaitListener | None = None,
        poll_s: float = 1.0,
        source: str | None = None,
    ) -> Iterator[None]:
        """Hold the lock for one write (of the document `source`, if it writes one). Another process
        holding it: wait (telling `on_wait` who holds it, about every `poll_s`), or with wait=False
        raise WriterBusy at once."""
        self._acquire(what, wait, on_wait, poll_s, source)
        try:
            yield
        finally:
            self._release()

    def progress(self, fraction: float) -> None:
        """The holder's progress (0 to 1), published at most once a second."""
        now = time.monotonic()
        if self._holders and now - self._last_progress >= PROGRESS_EVERY_S:
            self._last_progress = now
            self._publish(fraction)

    def holder(self) -> WriterInfo | None:
        """Who holds the lock, as it said; None when nobody says (or the one who did is gone)."""
        try:
            info = WriterInfo.model_validate_json(self.info_path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            return None
        return info if process_alive(info.pid) else None

    def _acquire(self, what: str, wait: bool, on_wait: WaitListener | None, poll_s: float, source: str | None) -> None:
        with self._guard:
            if self._holders:
                self._holders += 1
                return
            if not wait:
                try:
                    self._file_lock.acquire(timeout=0)
                except Timeout:
                    holder = self.holder()
                    raise WriterBusy(
                        f"another process is writing this index: {holder.describe() if holder else 'unknown'}"
                    ) from None
            else:
                while True:
                    try:
                        self._file_lock.acquire(timeout=poll_s)
                        break
                    except Timeout:
                        if on_wait is not None:
                            on_wait(self.holder())
            self._holders = 1
            self._what, self._source = what, source
            self._started = time.time()
            self._publish(None)

    def _release(self) -> None:
        with self._guard:
            self._holders -= 1
            if self._holders:
                return
            self.info_path.unlink(missing_ok=True)
            self._file_lock.release()

    def _publish(self, fraction: float | None) -> None:
        info = WriterInfo(
            pid=os.getpid(), what=self._what, source=self._source, fraction=fraction, started_at=self._started
        )
        tmp = self.info_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(info.model_dump()), encoding="utf-8")
        os.replace(tmp, self.info_path)
