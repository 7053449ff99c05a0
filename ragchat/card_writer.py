"""Document cards written in the background, for the app (rag/document_cards.py says what a card is).

One thread per document index: every POLL_S it looks for a live, fully embedded document that has no
card for the answering model, and writes one when the model is idle (no generation running or
waiting, no ingest running). Writing stops as soon as a question waits for the model, and is tried
again later. Only the embedded model is used this way: it is the one whose queue says when a question
waits (an Ollama or OpenAI-compatible server is not given background work). The model is never
loaded for a card: the app loads it at start.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Callable

from core.schemas import DocumentRecord
from providers.llm.base import LLM
from rag.document_cards import DocumentCard, DocumentCards

log = logging.getLogger(__name__)

POLL_S = 5.0
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
        self._thread: threading.Thread | None = None
        self.written = 0
        self.stopped_for_questions = 0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=_write_while_owned,
                args=(weakref.ref(self), self._stopped, self._poll_s),
                name="card-writer",
                daemon=True,
            )
            _STARTED.add(self)
            self._thread.start()

    def stop(self) -> None:
        """Stop writing, a card in progress included (it is written again by a later writer)."""
        self._stopped.set()

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
def stop_all_writers() -> None:
    """Stop every started writer: at exit, so no card is being written inside llama.cpp while the
    interpreter shuts down, and after each test that opened an app (tests/conftest.py)."""
    for writer in list(_STARTED):
        writer.stop()


def _write_while_owned(owner: weakref.ref[CardWriter], stopped: threading.Event, poll_s: float) -> None:
    """The writer's thread. It holds its writer weakly: when the session that owns the writer is gone
    (an App dropped from Streamlit's cache, a test's), the thread ends instead of keeping that App's
    model in memory and writing cards with it."""
    while not stopped.wait(poll_s):
        writer = owner()
        if writer is None:
            return
        try:
            writer.write_next()
        except Exception:  # a card is a convenience: never let it take the app down
            log.exception("writing a document card failed; it is tried again later")
        del writer
