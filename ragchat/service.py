"""The one Python API behind the Streamlit app, the CLI and the tests.

Heavy parts (embedder, vector store, LLM) are created on first use and then kept, so a search needs
no LLM and `ragchat docs` loads no model at all.
"""

from __future__ import annotations

import threading
from functools import cached_property
from pathlib import Path

from ingestion.indexer import Indexer, Progress, _no_progress
from ingestion.registry import Registry
from rag.answerer import Answerer, AnswerStream
from rag.embedder import Embedder
from rag.llm.base import LLM
from rag.llm.factory import build_llm
from rag.retriever import DenseRetriever
from rag.vector_store import ChromaStore
from ragchat.schemas import Answer, DocumentRecord, Hit, IngestResult, ModelInfo
from ragchat.settings import Settings


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
    def indexer(self) -> Indexer:
        return Indexer(self.settings, self.embedder, self.store, self.registry)

    @cached_property
    def retriever(self) -> DenseRetriever:
        return DenseRetriever(self.embedder, self.store, self.registry)

    @cached_property
    def answerer(self) -> Answerer:
        return Answerer(self.settings, self.retriever, self.llm, self.models)

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

    def search(self, query: str, k: int | None = None) -> list[Hit]:
        return self.retriever.search(query, k or self.settings.top_k)

    def ask_stream(self, question: str) -> AnswerStream:
        return self.answerer.ask(question)

    def ask(self, question: str) -> Answer:
        return self.ask_stream(question).result()
