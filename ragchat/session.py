"""One user's view of ragchat: the Python API behind the Streamlit app, the CLI and the tests.

A Session holds what is the user's own (memory, conversations, query log, rate limit, and the document
index: the shared one, or their own with RAGCHAT_DOCUMENTS=per_user) and borrows the process's models
from its App. `ask_stream` returns a Turn: the answer streams first, and the memory pass after it is
the Turn's last stage, so no caller has to remember to run it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import suppress
from functools import cached_property
from pathlib import Path

from core.language import LanguageDetector
from core.schemas import (
    Answer,
    Chunk,
    DocumentRecord,
    IngestProgress,
    IngestResult,
    ModelInfo,
    Redaction,
    Retrieval,
    doc_id_for,
)
from core.settings import Settings
from core.user_space import UserSpace
from ingestion.indexer import Progress, no_progress
from ingestion.ocr import Tesseract
from ingestion.page_image import PageImage, render_page
from memory.markdown_store import memory_files
from memory.memory import Memory
from memory.memory_log import MemoryLog
from providers.chroma_server import store_label
from rag.conversation_export import conversation_markdown
from rag.conversations import ConversationStore
from rag.document_cards import card_text
from rag.guardrails import Guardrails
from rag.messages import memory_note
from rag.pipeline import AnswerPipeline, AnswerStream, AskOptions
from rag.query_log import QueryLog
from rag.rate_limit import RateLimiter
from rag.stages import Retrieve
from rag.support import SupportChecker
from ragchat.card_writer import CardTarget, CardWriter
from ragchat.document_index import DocumentIndex, IndexOpened
from ragchat.ingest_jobs import IngestJobs
from ragchat.process_models import ProcessModels


class Session:
    def __init__(self, app: ProcessModels, space: UserSpace, index: DocumentIndex) -> None:
        """Made by ragchat.application.App.session(user), which passes itself as `app` (the models it
        shares, and `app.session(other)` for another user's session); `index` is the shared document
        index or this user's own."""
        self.app = app
        self.settings: Settings = app.settings
        self.user = space.user
        self.space = space
        self.document_index = index
        self._warm_lock = threading.Lock()
        self._warmed = False

    # ---- documents ------------------------------------------------------------------------------
    def open_index(self, wait: bool = False) -> IndexOpened:
        """Crash recovery and reconciliation with the vector store, as a write of their own (every
        ingest, delete and rebuild also runs them first). Raises WriterBusy when another process is
        writing and wait is False, VectorStoreUnavailable when a Chroma server cannot be used."""
        return self.document_index.recover(wait=wait)

    @property
    def jobs(self) -> IngestJobs:
        """Background ingests for the app: one worker, progress to poll, cancel between batches."""
        return self.document_index.jobs

    def ingest_bytes(
        self,
        name: str,
        data: bytes,
        progress: Progress = no_progress,
        password: str | None = None,
        redact: bool | None = None,
        cancel: threading.Event | None = None,
        wait: bool = True,
    ) -> IngestResult:
        """Index one file. redact None follows RAGCHAT_REDACT_PII; cancel stops between batches and
        leaves the index as it was (status "cancelled"). A Chroma server that cannot be reached fails
        the file with the reason, like any other failure. Another process writing the index: wait for
        it (progress says so), or with wait=False fail the file with who is writing."""
        return self.document_index.ingest_bytes(
            name, data, progress, password=password, redact=redact, cancel=cancel, wait=wait
        )

    def ingest_paths(
        self,
        paths: list[Path],
        password: str | None = None,
        redact: bool | None = None,
        progress: Callable[[str, IngestProgress], None] | None = None,
        wait: bool = True,
    ) -> list[IngestResult]:
        results: list[IngestResult] = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                reason = exc.strerror or str(exc)
                results.append(IngestResult(source=path.name, status="failed", error=f"cannot read the file: {reason}"))
                continue
            report = (lambda update, name=path.name: progress(name, update)) if progress else no_progress
            results.append(self.ingest_bytes(path.name, data, report, password=password, redact=redact, wait=wait))
        return results

    def indexed_chunks(self) -> list[Chunk]:
        """Every chunk the vector store holds (evaluation checks its gold evidence against them)."""
        return [chunk for batch in self.document_index.store.iter_chunks() for chunk in batch]

    def documents(self) -> list[DocumentRecord]:
        """The registry's documents (local, so listed even while a Chroma server is down). Which of them
        the vector store lost chunks of is recorded when the index is opened."""
        return self.document_index.registry.all()

    def redactions(self, source: str) -> list[Redaction]:
        """The redaction report of a document (empty when it was indexed without redaction)."""
        return self.document_index.registry.redactions(doc_id_for(source))

    def document_version(self, source: str) -> str | None:
        """The live version (content hash) of an indexed document; None when it is not indexed."""
        record = self.document_index.registry.get(doc_id_for(source))
        return record.content_hash if record else None

    def page_text(self, source: str, page: int) -> str | None:
        """A page's text as indexed (page 0: a text file's whole text); None when there is none."""
        registry = self.document_index.registry
        record = registry.get(doc_id_for(source))
        stored = registry.page(record.doc_id, record.content_hash, page) if record else None
        return stored.text if stored else None

    def page_image(
        self, source: str, page: int, span: tuple[int, int] | None = None, passage: str = ""
    ) -> PageImage | None:
        """Page `page` of an indexed PDF as an image, the passage at `span` (offsets in the page's text)
        or else `passage` highlighted. None when no PDF is kept for it: a text file, a redacted or
        encrypted PDF, one indexed before PDFs were kept. IndexError for a page it does not have."""
        registry = self.document_index.registry
        record = registry.get(doc_id_for(source))
        pdf = registry.original(record.doc_id, record.content_hash) if record and record.file_type == "pdf" else None
        if record is None or pdf is None:
            return None
        stored = registry.page(record.doc_id, record.content_hash, page)
        scale = self.settings.page_image_scale
        ocr = Tesseract.from_settings(self.settings) if stored and stored.ocr else None
        return render_page(pdf, page, scale, stored.text if stored else None, span, passage, ocr)

    def document_card(self, record: DocumentRecord) -> str | None:
        """The document's card (its overview, written in the background) as text, if it has one."""
        card = self.document_index.cards.latest(record.doc_id, record.content_hash)
        return card_text(card) if card is not None else None

    def delete(self, source: str) -> bool:
        return self.document_index.delete(source)

    def index_problems(self) -> list[str]:
        """Why the index does not fit the current settings; [] when it does (see `reindex`)."""
        return self.document_index.maintenance.index_problems()

    def resume(self, progress: Progress = no_progress) -> list[IngestResult]:
        """Finish embedding the documents an interrupted ingest left searchable by keyword only,
        waiting for another process's write first."""
        return self.document_index.resume(progress, wait=True)

    def reindex(self, progress: Progress = no_progress) -> list[IngestResult]:
        """Rebuild every document's chunks and vectors with the current settings, from stored page texts."""
        return self.document_index.reindex(progress)

    def search(
        self, query: str, k: int | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Retrieval:
        """The retrieval a question gets (the answer path's Retrieve stage): same defaults, same filters.
        Only reads: the answer path's stores (which create their tables) are not opened for it."""
        self._warm_up(self.retrieve.detect)
        self.document_index.require_current()
        return self.retrieve.run(query, k, bm25_weight, rerank)

    @cached_property
    def retrieve(self) -> Retrieve:
        return Retrieve(self.document_index.retriever, self.settings, LanguageDetector.from_settings(self.settings))

    def _warm_up(self, detect: LanguageDetector) -> None:
        """A first search waits for Chroma (import and open: ~1 s at 100k chunks), the embedder (~0.45 s)
        and the language model (~0.4 s). The last two load in background threads while this one opens
        Chroma (100k chunks, load ~5: warm start 2.12 -> 1.98 s for the embedder's thread). A load that
        fails there raises again, with its message, when the search itself asks for the model."""
        detect.preload()
        with self._warm_lock:
            if self._warmed:
                return
            self._warmed = True
        # Not a daemon: a process that ends while ONNX Runtime builds its session aborts ("terminate
        # called without an active exception", e.g. a search refused at once); exit waits for the load.
        threading.Thread(target=_try, args=(lambda: self.app.retrieval_embedder,), name="embedder-load").start()

    # ---- questions ------------------------------------------------------------------------------
    @cached_property
    def conversations(self) -> ConversationStore:
        return ConversationStore(self.settings.db_path, self.user)

    @cached_property
    def memory(self) -> Memory:
        """USER_MEMORY.md and COMPANY_MEMORY.md (in RAGCHAT_HOME for the default user; see
        core/user_space.py for a named one), and the graph that writes them."""
        return Memory.from_settings(
            memory_files(self.space.user_memory_dir, self.space.company_memory_dir),
            MemoryLog(self.settings.db_path, self.user),
            self.app.llm,
            lambda texts: self.app.embedder.embed(texts),
            self.settings,
        )

    @cached_property
    def query_log(self) -> QueryLog:
        return QueryLog(self.settings.db_path, self.user)

    @cached_property
    def pipeline(self) -> AnswerPipeline:
        settings = self.settings
        guardrails = Guardrails(
            settings.max_question_chars, RateLimiter(settings.db_path, settings.rate_limit_per_minute, user=self.user)
        )
        support = SupportChecker(
            lambda texts: self.app.embedder.embed(texts),
            settings.support_min_term_share,
            settings.support_min_similarity,
            settings.support_min_terms,
            settings.support_question_words,
        )
        return AnswerPipeline(
            settings,
            self.document_index.retriever,
            self.conversations,
            self.app.llm,
            self.models,
            guardrails,
            support,
            self.query_log,
            lambda texts: self.app.embedder.embed(texts),
            self.memory if settings.memory_enabled else None,
            self.document_index.registry,
            lambda: self.document_index.summaries,
            lambda: self.document_index.store,
            lambda: self.document_index.cards,
            (lambda: self.document_index.answers) if settings.stored_document_answers else None,
        )

    @cached_property
    def card_writer(self) -> CardWriter:
        """Writes this index's document cards in the background while the model is idle (the app
        starts it); it never loads the model."""
        app = self.app
        writer = CardWriter(
            CardTarget(
                documents=self.documents,
                cards=lambda: self.document_index.cards,
                llm=lambda: app.llm() if app.llm_status().state == "ready" else None,
                model=lambda: app.llm_label,
                # late-bound: a session opens even while the vector store is unreachable
                write=lambda record, stop: self.pipeline.write_card(record, stop),
                ingesting=lambda: self.document_index.jobs.busy(),
            )
        )
        self.document_index.jobs.when_idle(writer.waker())
        return writer

    def models(self) -> ModelInfo:
        return ModelInfo(
            llm=self.app.llm_label,
            llm_fallback=self.app.llm_fallback,
            embedder=self.app.retrieval_embedder_label,
            reranker=self.app.reranker[1],
            vector_store=store_label(self.settings.model_copy(update={"collection": self.space.collection})),
        )

    def ask_stream(self, question: str, options: AskOptions | None = None) -> Turn:
        """One chat turn. ForeignSession when `options.session_id` is another user's conversation."""
        options = options or AskOptions()
        if options.session_id:
            self.conversations.check_session(options.session_id)
        self.document_index.require_current()
        return Turn(self, self.pipeline.ask(question, options))

    def ask(self, question: str, options: AskOptions | None = None) -> Answer:
        """Ask and wait: the answer with the memory pass done."""
        return self.ask_stream(question, options).finish()

    def export_conversation(self, session_id: str) -> str | None:
        """The conversation as Markdown with its citations; None when no such conversation exists."""
        summary = self.conversations.summary(session_id)
        if summary is None:
            return None
        return conversation_markdown(summary, self.conversations.history(session_id))

    def needs_memory_pass(self, answer: Answer) -> bool:
        """Does this answered turn still need the memory graph? Only when memory is on, the message
        may state a fact, and the graph has not already run for it (a statement-only message)."""
        return (
            self.settings.memory_enabled
            and answer.guardrail is None
            and answer.memory_note is None
            and self.memory.may_hold_facts(answer.question)
        )

    def remember_turn(self, answer: Answer) -> Answer:
        """The memory stage: the graph runs on the turn's question after it was answered (so it never
        delays the answer), and what it wrote is recorded on the answer and its stored turn."""
        if not self.needs_memory_pass(answer):
            return answer
        outcome = self.memory.remember(answer.question, answer.session_id, answer.language)
        note = memory_note(outcome, answer.language) if outcome.writes or outcome.skipped else None
        updated = answer.model_copy(update={"memory_writes": outcome.writes, "memory_note": note})
        if answer.session_id:
            self.conversations.replace_last(answer.session_id, updated)
        return updated


class Turn:
    """One question's turn: read `tokens()` as they stream, then `finish()` runs the memory stage
    (check `needs_memory` first to show that it is running) and returns the final answer."""

    def __init__(self, session: Session, stream: AnswerStream) -> None:
        self._session = session
        self._stream = stream
        self.guardrail = stream.guardrail
        self.messages = stream.messages
        self._finished: Answer | None = None

    def tokens(self) -> Iterator[str]:
        return self._stream.tokens()

    def close(self) -> None:
        """Stop generating (the reader left before the end)."""
        self._stream.close()

    def result(self) -> Answer:
        """The answer as generated, before the memory stage."""
        return self._stream.result()

    @property
    def needs_memory(self) -> bool:
        return self._finished is None and self._session.needs_memory_pass(self.result())

    def finish(self) -> Answer:
        if self._finished is None:
            self._finished = self._session.remember_turn(self.result())
        return self._finished


def _try(load: Callable[[], object]) -> None:
    """Run a background load whose failure the caller meets again, with its message, when it asks."""
    with suppress(Exception):
        load()
