"""The one Python API behind the Streamlit app, the CLI and the tests.

Heavy parts (embedder, vector store, LLM) are created on first use and then kept, so a search needs
no LLM and `ragchat docs` loads no model at all. A service acts for one user (the default user unless
named); `for_user` gives another user's service, which borrows the models of the first.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from ingestion.indexer import Indexer, Progress, _no_progress
from ingestion.jobs import IngestJobs
from ingestion.registry import Registry
from memory.markdown_store import memory_files
from memory.memory import Memory
from memory.memory_log import MemoryLog
from rag.answerer import Answerer, AnswerStream
from rag.bm25_index import BM25Index
from rag.chroma_server import store_label
from rag.conversation_export import conversation_markdown
from rag.conversations import ConversationStore
from rag.embedder import Embedder
from rag.guardrails import Guardrails
from rag.llm.base import LLM, QueueListener
from rag.query_log import QueryLog
from rag.rate_limit import RateLimiter
from rag.retriever import HybridRetriever
from rag.support import SupportChecker
from rag.vector_store import ChromaStore
from ragchat.document_index import DocumentIndex
from ragchat.process_models import ProcessModels
from ragchat.schemas import (
    Answer,
    DocumentRecord,
    IngestProgress,
    IngestResult,
    LLMChoice,
    LLMOption,
    LLMStatus,
    ModelInfo,
    Redaction,
    Retrieval,
    doc_id_for,
)
from ragchat.settings import Settings
from ragchat.users import user_name, user_space
from tools.weather import run_weather_tool
from tools.weather_explanation import explanation_messages, facts, unsupported_numbers, whole_sentences
from tools.weather_models import WeatherAnalysis, WeatherRequest

log = logging.getLogger(__name__)


class RagService:
    def __init__(
        self, settings: Settings, llm: LLM | None = None, user: str | None = None, *, owner: RagService | None = None
    ) -> None:
        """`llm`: an already loaded model to share (the Eval page evaluates with the app's model).
        `user`: who this service acts for (None: the default user, i.e. the single-user layout);
        InvalidUserName for a bad name. `owner`: the service whose models this one borrows (for_user)."""
        self.settings = settings
        settings.home.mkdir(parents=True, exist_ok=True)
        self.user = user_name(user)
        self.space = user_space(settings, self.user)
        self._owner = owner or self
        self._models = owner._models if owner else ProcessModels(settings, llm)
        self._views: dict[str, RagService] = {}
        self._views_lock = threading.Lock()

    def for_user(self, user: str | None) -> RagService:
        """The service as `user` sees it: their memory, conversations, query log and rate limit (and
        their own documents with RAGCHAT_DOCUMENTS=per_user). It borrows this process's models: one LLM
        (a single llama.cpp instance), one embedder and one reranker serve every user, and the shared
        document index is one for all. A user's service is made once per process and kept.
        InvalidUserName for a bad name."""
        owner = self._owner
        name = user_name(user)
        if name == owner.user:
            return owner
        with owner._views_lock:
            view = owner._views.get(name or "")
            if view is None:
                view = owner._views[name or ""] = RagService(owner.settings, user=name, owner=owner)
        return view

    @property
    def embedder(self) -> Embedder:
        return self._models.embedder

    @cached_property
    def document_index(self) -> DocumentIndex:
        """The documents this user searches: with RAGCHAT_DOCUMENTS=shared the owner's, one for all."""
        if self._owner is not self and self.settings.documents == "shared":
            return self._owner.document_index
        models = self._models
        return DocumentIndex(self.settings, self.space, lambda: models.embedder, lambda: models.reranker)

    @property
    def registry(self) -> Registry:
        return self.document_index.registry

    @property
    def store(self) -> ChromaStore:
        return self.document_index.store

    @property
    def bm25(self) -> BM25Index:
        return self.document_index.bm25

    @property
    def indexer(self) -> Indexer:
        return self.document_index.indexer

    @property
    def retriever(self) -> HybridRetriever:
        return self.document_index.retriever

    @property
    def jobs(self) -> IngestJobs:
        """Background ingests for the app: one worker, progress to poll, cancel between batches."""
        return self.document_index.jobs

    @cached_property
    def conversations(self) -> ConversationStore:
        return ConversationStore(self.settings.db_path, self.user)

    @cached_property
    def memory(self) -> Memory:
        """USER_MEMORY.md and COMPANY_MEMORY.md (in RAGCHAT_HOME for the default user; see
        ragchat/users.py for a named one), and the graph that writes them."""
        return Memory(
            memory_files(self.space.user_memory_dir, self.space.company_memory_dir),
            MemoryLog(self.settings.db_path, self.user),
            self.llm,
            self.embedder.embed,
            self.settings.memory_min_confidence,
            self.settings.memory_context_tokens,
        )

    @cached_property
    def query_log(self) -> QueryLog:
        return QueryLog(self.settings.db_path, self.user)

    @cached_property
    def answerer(self) -> Answerer:
        memory = self.memory if self.settings.memory_enabled else None
        guardrails = Guardrails(
            self.settings.max_question_chars,
            RateLimiter(self.settings.db_path, self.settings.rate_limit_per_minute, user=self.user),
        )
        support = SupportChecker(
            self.embedder.embed, self.settings.support_min_overlap, self.settings.support_min_similarity
        )
        return Answerer(
            self.settings,
            self.retriever,
            self.conversations,
            self.llm,
            self.models,
            guardrails,
            support,
            self.query_log,
            memory,
        )

    def llm(self) -> LLM:
        """The answering model, built on first use (loading a GGUF takes seconds); one per process."""
        return self._models.llm()

    def llm_choice(self) -> LLMChoice:
        return self._models.llm_choice()

    def llm_status(self) -> LLMStatus:
        return self._models.llm_status()

    def llm_options(self) -> list[LLMOption]:
        return self._models.llm_options()

    def use_llm(self, choice: LLMChoice) -> LLM:
        """Answer with another model from now on, for every user and session of this process."""
        return self._models.use_llm(choice)

    def models(self) -> ModelInfo:
        return ModelInfo(
            llm=self._models.llm_label,
            embedder=self.embedder.label,
            reranker=self._models.reranker[1],
            vector_store=store_label(self.settings.model_copy(update={"collection": self.space.collection})),
        )

    def ingest_bytes(
        self,
        name: str,
        data: bytes,
        progress: Progress = _no_progress,
        password: str | None = None,
        redact: bool | None = None,
        cancel: threading.Event | None = None,
    ) -> IngestResult:
        """Index one file. redact None follows RAGCHAT_REDACT_PII; cancel stops between batches and
        leaves the index as it was (status "cancelled"). A Chroma server that cannot be reached fails
        the file with the reason, like any other failure."""
        return self.document_index.ingest_bytes(name, data, progress, password=password, redact=redact, cancel=cancel)

    def ingest_paths(
        self,
        paths: list[Path],
        password: str | None = None,
        redact: bool | None = None,
        progress: Callable[[str, IngestProgress], None] | None = None,
    ) -> list[IngestResult]:
        results: list[IngestResult] = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                reason = exc.strerror or str(exc)
                results.append(IngestResult(source=path.name, status="failed", error=f"cannot read the file: {reason}"))
                continue
            report = (lambda update, name=path.name: progress(name, update)) if progress else _no_progress
            results.append(self.ingest_bytes(path.name, data, report, password=password, redact=redact))
        return results

    def documents(self) -> list[DocumentRecord]:
        """The registry's documents (local, so listed even while a Chroma server is down). Which of them
        the vector store lost chunks of is recorded by `check_store`."""
        return self.registry.all()

    def check_store(self) -> None:
        """Open the vector store and bring BM25 and the registry in step with it, once per process
        (every search, ask and ingest does it first). Raises VectorStoreUnavailable when a Chroma
        server cannot be used."""
        self.indexer  # noqa: B018 - recover + reconcile run when the indexer is built

    def redactions(self, source: str) -> list[Redaction]:
        """The redaction report of a document (empty when it was indexed without redaction)."""
        return self.registry.redactions(doc_id_for(source))

    def delete(self, source: str) -> bool:
        return self.indexer.delete(source)

    def index_problems(self) -> list[str]:
        """Why the index does not fit the current settings; [] when it does (see `reindex`)."""
        return self.indexer.index_problems()

    def reindex(self, progress: Progress = _no_progress) -> list[IngestResult]:
        """Rebuild every document's chunks and vectors with the current settings, from stored page texts."""
        return self.document_index.reindex(progress)

    def search(
        self, query: str, k: int | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Retrieval:
        self.document_index.require_current()
        weight = self.settings.bm25_weight if bm25_weight is None else bm25_weight
        return self.retriever.search(query, k or self.settings.top_k, weight, rerank)

    def ask_stream(
        self,
        question: str,
        session_id: str | None = None,
        bm25_weight: float | None = None,
        rerank: bool = True,
        client_id: str | None = None,
        top_k: int | None = None,
        on_queued: QueueListener | None = None,
    ) -> AnswerStream:
        """`client_id` keys the rate limit (the app passes its browser session); else `session_id` does.
        ForeignSession when `session_id` is another user's conversation. `on_queued(n)` hears how many
        generations are ahead while the embedded model is busy (0: its turn came), in the thread that
        reads the stream."""
        if session_id:
            self.conversations.check_session(session_id)
        self.document_index.require_current()
        return self.answerer.ask(question, session_id, bm25_weight, rerank, client_id, top_k, on_queued)

    def ask(
        self,
        question: str,
        session_id: str | None = None,
        bm25_weight: float | None = None,
        rerank: bool = True,
        client_id: str | None = None,
        top_k: int | None = None,
        on_queued: QueueListener | None = None,
    ) -> Answer:
        stream = self.ask_stream(question, session_id, bm25_weight, rerank, client_id, top_k, on_queued)
        return self.remember_turn(stream.result())

    def export_conversation(self, session_id: str) -> str | None:
        """The conversation as Markdown with its citations; None when no such conversation exists."""
        summary = self.conversations.summary(session_id)
        if summary is None:
            return None
        return conversation_markdown(summary, self.conversations.history(session_id))

    def wants_memory_pass(self, answer: Answer) -> bool:
        """Does this answered turn still need the memory graph? Only when memory is on, the message
        may state a fact, and the graph has not already run for it (a statement-only message)."""
        return (
            self.settings.memory_enabled
            and answer.guardrail is None
            and answer.memory_note is None
            and self.memory.may_hold_facts(answer.question)
        )

    def remember_turn(self, answer: Answer) -> Answer:
        """Run the memory graph on the turn's question after it was answered (so it never delays the
        answer) and record what it wrote on the answer and its stored conversation turn."""
        if not self.wants_memory_pass(answer):
            return answer
        outcome = self.memory.remember(answer.question, answer.session_id)
        updated = answer.model_copy(update={"memory_writes": outcome.writes, "memory_note": outcome.note or None})
        if answer.session_id:
            self.conversations.replace_last(answer.session_id, updated)
        return updated

    def weather(self, request: WeatherRequest) -> WeatherAnalysis:
        """Weather analytics for a place, computed in the sandboxed tool; then, if asked, a plain-language
        explanation written by the LLM from those figures. Raises tools.weather_models.WeatherError
        (not found, ambiguous with candidates, Open-Meteo's reason, timeout, sandbox limit) with a message
        fit to show. A failing LLM never loses the analysis: the note says why there is no explanation."""
        analysis = run_weather_tool(self.settings, request)
        if request.explain:
            self._explain_weather(analysis)
        return analysis

    def _explain_weather(self, analysis: WeatherAnalysis) -> None:
        started = time.perf_counter()
        try:
            llm = self.llm()
            text = whole_sentences(
                llm.complete(explanation_messages(analysis), self.settings.weather_explain_max_tokens, temperature=0.0)
            )
        except Exception as exc:
            log.warning("weather explanation failed: %s", exc)
            analysis.explanation_note = f"The explanation is unavailable: the language model failed ({exc})."
            return
        finally:
            analysis.timings_ms["explain_ms"] = round((time.perf_counter() - started) * 1000, 1)
        analysis.explanation_model = llm.label
        if not text:
            analysis.explanation_note = "The explanation is unavailable: the language model returned nothing."
            return
        analysis.explanation = text
        invented = unsupported_numbers(text, facts(analysis))
        if invented:
            analysis.explanation_note = (
                f"The explanation mentions figures that are not in the computed analysis ({', '.join(invented)}); "
                "rely on the table and charts."
            )
