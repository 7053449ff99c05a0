"""The one Python API behind the Streamlit app, the CLI and the tests.

Heavy parts (embedder, vector store, LLM) are created on first use and then kept, so a search needs
no LLM and `ragchat docs` loads no model at all.
"""

from __future__ import annotations

import logging
import threading
from functools import cached_property
from pathlib import Path

from ingestion.indexer import Indexer, Progress, _no_progress
from ingestion.registry import Registry
from memory.markdown_store import memory_files
from memory.memory import Memory
from memory.memory_log import MemoryLog
from rag.answerer import Answerer, AnswerStream
from rag.bm25_index import BM25Index
from rag.conversation_export import conversation_markdown
from rag.conversations import ConversationStore
from rag.embedder import Embedder
from rag.guardrails import Guardrails
from rag.llm.base import LLM
from rag.llm.factory import build_llm
from rag.query_log import QueryLog
from rag.rate_limit import RateLimiter
from rag.reranker import Reranker, load_reranker
from rag.retriever import HybridRetriever
from rag.support import SupportChecker
from rag.vector_store import ChromaStore
from ragchat.schemas import Answer, DocumentRecord, IngestResult, ModelInfo, Retrieval
from ragchat.settings import Settings

log = logging.getLogger(__name__)


class RagService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        settings.home.mkdir(parents=True, exist_ok=True)
        self._llm: LLM | None = None
        self._llm_lock = threading.Lock()

    @cached_property
    def registry(self) -> Registry:
        return Registry(self.settings.db_path)

    @cached_property
    def embedder(self) -> Embedder:
        return Embedder(self.settings)

    @cached_property
    def store(self) -> ChromaStore:
        return ChromaStore(self.settings)

    @cached_property
    def bm25(self) -> BM25Index:
        return BM25Index(self.settings.bm25_path)

    @cached_property
    def indexer(self) -> Indexer:
        indexer = Indexer(self.settings, self.embedder, self.store, self.bm25, self.registry)
        if len(self.bm25) != self.store.count():
            # The keyword index was deleted, or a crash left it behind the vector store: refill it once.
            log.warning("BM25 index out of step with the vector store; rebuilding it from the stored chunks")
            indexer.rebuild_keyword_index()
        return indexer

    @cached_property
    def _reranker(self) -> tuple[Reranker | None, str]:
        return load_reranker(self.settings)

    @cached_property
    def conversations(self) -> ConversationStore:
        return ConversationStore(self.settings.db_path)

    @cached_property
    def retriever(self) -> HybridRetriever:
        self.indexer  # noqa: B018 - checks the BM25 index is in step before the first search
        reranker, label = self._reranker
        return HybridRetriever(
            self.embedder,
            self.store,
            self.bm25,
            self.registry,
            reranker,
            label,
            candidates=self.settings.candidates,
            fusion=self.settings.fusion,
        )

    @cached_property
    def memory(self) -> Memory:
        """USER_MEMORY.md and COMPANY_MEMORY.md in RAGCHAT_HOME, and the graph that writes them."""
        return Memory(
            memory_files(self.settings.home),
            MemoryLog(self.settings.db_path),
            self.llm,
            self.embedder.embed,
            self.settings.memory_min_confidence,
            self.settings.memory_context_tokens,
        )

    @cached_property
    def query_log(self) -> QueryLog:
        return QueryLog(self.settings.db_path)

    @cached_property
    def answerer(self) -> Answerer:
        memory = self.memory if self.settings.memory_enabled else None
        guardrails = Guardrails(
            self.settings.max_question_chars,
            RateLimiter(self.settings.db_path, self.settings.rate_limit_per_minute),
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
        """The answering model, built on first use (loading a GGUF takes seconds)."""
        with self._llm_lock:
            if self._llm is None:
                self._llm = build_llm(self.settings)
            return self._llm

    def models(self) -> ModelInfo:
        return ModelInfo(
            llm=self._llm.label if self._llm else "not loaded yet",
            embedder=self.embedder.label,
            reranker=self._reranker[1],
        )

    def ingest_bytes(self, name: str, data: bytes, progress: Progress = _no_progress) -> IngestResult:
        return self.indexer.ingest(name, data, progress)

    def ingest_paths(self, paths: list[Path]) -> list[IngestResult]:
        results: list[IngestResult] = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                results.append(IngestResult(source=path.name, status="failed", error=f"cannot read file: {exc}"))
                continue
            results.append(self.ingest_bytes(path.name, data))
        return results

    def documents(self) -> list[DocumentRecord]:
        return self.registry.all()

    def delete(self, source: str) -> bool:
        return self.indexer.delete(source)

    def search(
        self, query: str, k: int | None = None, bm25_weight: float | None = None, rerank: bool = True
    ) -> Retrieval:
        weight = self.settings.bm25_weight if bm25_weight is None else bm25_weight
        return self.retriever.search(query, k or self.settings.top_k, weight, rerank)

    def ask_stream(
        self,
        question: str,
        session_id: str | None = None,
        bm25_weight: float | None = None,
        rerank: bool = True,
        client_id: str | None = None,
    ) -> AnswerStream:
        """`client_id` keys the rate limit (the app passes its browser session); else `session_id` does."""
        return self.answerer.ask(question, session_id, bm25_weight, rerank, client_id)

    def ask(
        self,
        question: str,
        session_id: str | None = None,
        bm25_weight: float | None = None,
        rerank: bool = True,
        client_id: str | None = None,
    ) -> Answer:
        return self.remember_turn(self.ask_stream(question, session_id, bm25_weight, rerank, client_id).result())

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
