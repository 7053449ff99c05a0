"""Document cards written in the background, for the app (rag/document_cards.py says what a card is).

One thread per document index: it looks for a live, fully embedded document that has no card for the
answering model, and writes one when the model is idle (no generation running or waiting, no ingest
running). It looks at once when woken (an ingest ended: the first step of a card, reading the passages
that every request about the document begins with, then starts within a moment of the document being
searchable, so a request asked soon after reuses what it read), right after a card is written, and
otherwise every POLL_S. Writing stops as soon as a question waits for the model, and is tried
again later. Only the embedded model is used this way: it is the one whose queue says when a question
waits (an Ollama or OpenAI-compatible server is not given background work). The model is never
loaded for a card: the app loads it at start.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable

from core.schemas import DocumentRecord
from providers.llm.base import LLM
from rag.document_cards import DocumentCard, DocumentCards

log = logging.getLogger(__name__)

POLL_S = 5.0
STOP_WAIT_S = 10.0  # at most this long for writers to leave the model when all are stopped
_STARTED: weakref.WeakSet[CardWriter] = weakref.WeakSet()


class CardTarget:
    """What the writer needs of a session: its documents, their cards, the model, and the pipeline."""

    def __init__(
        self,
        documents: Callable[[], list[DocumentRecord]],
        cards: Callable[[], DocumentCards],
        llm: Callable[[], LLM | None],
        model: Callable[[], str],
        write: Callable[[DocumentRecord, Callable[[], bool]], DocumentCard | None],
        ingesting: Callable[[], bool],
    ) -> None:
        self.documents = documents
        self.cards = cards
        self.llm = llm
        self.model = model
        self.write = write
        self.ingesting = ingesting


class CardWriter:
    def __init__(self, target: CardTarget, poll_s: float = POLL_S) -> None:
        self._target = target
        self._poll_s = poll_s
        self._stopped = threading.Event()
        self._woken = threading.Event()
        self._thread: threading.Thread | None = None
        self.written = 0
        self.stopped_for_questions = 0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=_write_while_owned,
                args=(weakref.ref(self), self._stopped, self._woken, self._poll_s),
                name="card-writer",
                daemon=True,
            )
            _STARTED.add(self)
            self._thread.start()

    def stop(self) -> None:
        """Stop writing, a card in progress included (it is written again by a later writer)."""
        self._stopped.set()
        self._woken.set()

    def waker(self) -> Callable[[], None]:
        """What makes the writer look for a missing card now instead of at its next poll (an ingest
        just ended). It holds only the writer's event, not the writer: its caller (the ingest jobs'
        worker) outlives sessions, and the writer and its thread must still end with theirs."""
        return self._woken.set

    def write_next(self) -> DocumentCard | None:
        """Write the next missing card if the model is idle; None when there is nothing to do now."""
        target = self._target
        llm = target.llm()
        queue = getattr(llm, "queue", None)
        if llm is None or queue is None or queue.active or queue.waiting or target.ingesting():
            return None
        model = target.model()
        have = {(doc_id, version) for doc_id, version, label in target.cards().versions() if label == model}
        missing = [d for d in target.documents() if not d.pending_chunks and (d.doc_id, d.content_hash) not in have]
        if not missing:
            return None
        card = target.write(missing[0], lambda: bool(queue.waiting) or self._stopped.is_set())
        if card is None:
            self.stopped_for_questions += 1
        else:
            self.written += 1
        return card


@atexit.register
def stop_all_writers(wait_s: float = STOP_WAIT_S) -> None:
    """Stop every started writer and wait for its thread to leave the model (a step of a card's prompt
    or one token: about a second): at exit, so no card is being written inside llama.cpp while the
    interpreter shuts down, and after each test that opened an app (tests/conftest.py)."""
    writers = list(_STARTED)
    for writer in writers:
        writer.stop()
    deadline = time.monotonic() + wait_s
    for writer in writers:
        thread = writer._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


def _write_while_owned(
    owner: weakref.ref[CardWriter], stopped: threading.Event, woken: threading.Event, poll_s: float
) -> None:
    """The writer's thread. It holds its writer weakly: when the session that owns the writer is gone
    (an App dropped from Streamlit's cache, a test's), the thread ends instead of keeping that App's
    model in memory and writing cards with it."""
    while True:
        woken.wait(poll_s)
        woken.clear()
        writer = owner()
        if writer is None or stopped.is_set():
            return
        try:
            if writer.write_next() is not None:
                woken.set()  # the next document's card, if one is missing, without waiting for the poll
        except Exception:  # a card is a convenience: never let it take the app down
            log.exception("writing a document card failed; it is tried again later")
        del writer
