"""Dense retrieval over the vector store, limited to registered document versions."""

from __future__ import annotations

from ingestion.registry import Registry
from rag.embedder import Embedder
from rag.vector_store import ChromaStore
from ragchat.schemas import Hit, Scores


class DenseRetriever:
    def __init__(self, embedder: Embedder, store: ChromaStore, registry: Registry) -> None:
        self._embedder = embedder
        self._store = store
        self._registry = registry

    def search(self, query: str, k: int) -> list[Hit]:
        live = self._registry.live_versions()
        if not live:
            return []
        # Over-fetch: chunks of a half-ingested or replaced version may sit in the store.
        candidates = self._store.query(self._embedder.embed_query(query), k * 2)
        hits = [
            Hit(chunk=chunk, scores=Scores(dense=similarity, fused=similarity))
            for chunk, similarity in candidates
            if live.get(chunk.doc_id) == chunk.content_hash
        ]
        return hits[:k]
