"""Ingests that run in the background, for the app.

Streamlit reruns a page script for every interaction, so a 2,000-page ingest cannot run inside one:
the page would freeze and a rerun would start it again. Jobs are owned by the document index (one per
server process; one per user with RAGCHAT_DOCUMENTS=per_user), run one at a time by a worker thread
(one embedder, two cores: two ingests side by side would only share the CPU), and publish their
progress, which the page polls. Cancel sets an event the indexer checks between pages and batches; a
cancelled ingest leaves the index exactly as it was.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from core.heap import give_back_free_memory
from core.schemas import IngestProgress, IngestResult
from providers.chroma_server import VectorStoreUnavailable

log = logging.getLogger(__name__)

JobKind = Literal["ingest", "rebuild", "resume"]
JobState = Literal["queued", "running", "done"]


class IngestJobView(BaseModel):
    """A snapshot of a job, safe to read from the page while the worker updates the job."""

    job_id: str
    name: str
    kind: JobKind
    state: JobState
    progress: IngestProgress
    result: IngestResult | None = None
    rebuilt: list[IngestResult] = Field(
        default_factory=list, description="Per document, for a rebuild or a resumed embedding."
    )
    cancelling: bool = False


@dataclass
class _Job:
    job_id: str
    name: str
    kind: JobKind
    data: bytes | None = None
    password: str | None = None
    redact: bool | None = None
    state: JobState = "queued"
    progress: IngestProgress = field(default_factory=lambda: IngestProgress(stage="waiting for the previous file"))
    result: IngestResult | None = None
    rebuilt: list[IngestResult] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)


class IngestTarget(Protocol):
    """What the jobs write to (ragchat.document_index.DocumentIndex)."""

    def ingest_bytes(
        self,
        name: str,
        data: bytes,
        progress: Callable[[IngestProgress], None],
        password: str | None = None,
        redact: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestResult: ...

    def reindex(self, progress: Callable[[IngestProgress], None]) -> list[IngestResult]: ...

    def resume(
        self, progress: Callable[[IngestProgress], None], cancel: threading.Event | None = None
    ) -> list[IngestResult]: ...


class IngestJobs:
    def __init__(self, index: IngestTarget) -> None:
        self._index = index
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[str] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._when_idle: list[Callable[[], None]] = []

    def when_idle(self, listener: Callable[[], None]) -> None:
        """Call `listener` each time the last queued job has ended (the card writer wakes on it)."""
        self._when_idle.append(listener)

    def submit(self, name: str, data: bytes, password: str | None = None, redact: bool | None = None) -> str:
        """Queue an ingest. An earlier upload of the same name still queued or running is cancelled:
        the newer file replaces it (a running one stops between batches and removes what it wrote)."""
        with self._lock:
            for job in self._jobs.values():
                if job.kind == "ingest" and job.name == name and job.state != "done":
                    job.cancel.set()
        return self._add(_Job(uuid.uuid4().hex[:12], name, "ingest", data=data, password=password, redact=redact))

    def submit_resume(self) -> str:
        """Finish embedding documents an interrupted ingest left searchable by keyword only."""
        return self._add(_Job(uuid.uuid4().hex[:12], "documents left partly embedded", "resume"))

    def submit_rebuild(self) -> str:
        return self._add(_Job(uuid.uuid4().hex[:12], "the whole index", "rebuild"))

    def retry_with_password(self, job_id: str, password: str) -> str | None:
        """A new job for a file that needed a password (its bytes are kept until then)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.data is None:
                return None
            data, name, redact = job.data, job.name, job.redact
            job.data = None
        return self.submit(name, data, password=password, redact=redact)

    def cancel(self, job_id: str) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.kind != "rebuild":
                job.cancel.set()

    def forget(self, job_id: str) -> None:
        """Drop a finished job (and any bytes it kept)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.state == "done":
                del self._jobs[job_id]

    def view(self, job_id: str) -> IngestJobView | None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            return IngestJobView(
                job_id=job.job_id,
                name=job.name,
                kind=job.kind,
                state=job.state,
                progress=job.progress.model_copy(),
                result=job.result,
                rebuilt=list(job.rebuilt),
                cancelling=job.cancel.is_set() and job.state != "done",
            )

    def busy(self) -> bool:
        with self._lock:
            return any(job.state != "done" for job in self._jobs.values())

    def wait(self, job_id: str, timeout: float) -> IngestJobView | None:
        """Block until a job is done or the timeout passes (the CLI and tests; the page polls)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            view = self.view(job_id)
            if view is None or view.state == "done":
                return view
            time.sleep(0.05)
        return self.view(job_id)

    # ---- the worker -------------------------------------------------------------------------------
    def _add(self, job: _Job) -> str:
        with self._lock:
            self._jobs[job.job_id] = job
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="ingest-jobs", daemon=True)
                self._worker.start()
        self._queue.put(job.job_id)
        return job.job_id

    def _run(self) -> None:
        while True:
            job_id = self._queue.get()
            with self._lock:
                job = self._jobs.get(job_id)
                if job is None:
                    continue
                job.state = "running"
            try:
                self._execute(job)
            except VectorStoreUnavailable as exc:  # the Chroma server is down: its sentence says so
                job.result = IngestResult(source=job.name, status="failed", error=str(exc))
            except Exception as exc:  # the worker must survive anything one job does
                log.exception("background job %s failed", job.name)
                job.result = IngestResult(source=job.name, status="failed", error=f"{type(exc).__name__}: {exc}")
            with self._lock:
                if job.kind == "ingest" and not (job.result and job.result.needs_password):
                    job.data = None
                job.state = "done"
            if self._queue.empty():  # idle: what the jobs freed beside the searches goes back (core/heap.py)
                give_back_free_memory()
                for listener in self._when_idle:
                    try:
                        listener()
                    except Exception:  # a listener must not end the worker
                        log.exception("an ingest listener failed")

    def _execute(self, job: _Job) -> None:
        def update(progress: IngestProgress) -> None:
            job.progress = progress

        if job.kind == "rebuild":
            job.rebuilt = self._index.reindex(update)
            return
        if job.kind == "resume":
            job.rebuilt = self._index.resume(update, job.cancel)
            return
        if job.cancel.is_set():
            job.result = IngestResult(source=job.name, status="cancelled", error="cancelled before it started")
            return
        assert job.data is not None
        job.result = self._index.ingest_bytes(
            job.name, job.data, update, password=job.password, redact=job.redact, cancel=job.cancel
        )
