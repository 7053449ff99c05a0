"""Hybrid retrieval: BM25 and dense candidates → fusion → optional cross-encoder → top k.

Both retrievers return `settings.retrieval_candidates` chunks; only chunks of the registered version of a
document survive (a half-ingested or replaced version may still sit in the stores). Every candidate
gets its cosine similarity to the query, including BM25-only ones (from the stored embedding), so
the refusal gate and the transparency table have one comparable number for all (on MiniLM's scale,
which the thresholds are set on: `TextEmbedder.comparable`; only the multilingual embedder rescales).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.schemas import Chunk, Hit, Retrieval, Scores
from ingestion.bm25_index import BM25Index
from ingestion.registry import Registry
from providers.embedder import TextEmbedder
from providers.reranker import Reranker
from providers.vector_store import ChromaStore
from rag.fusion import FusionRule, fuse, ranks


class HybridRetriever:
    def __init__(
        self,
        embedder: TextEmbedder,
        store: ChromaStore,
        bm25: BM25Index,
        registry: Registry,
        reranker: Reranker | None,
        reranker_label: str,
        candidates: int,
        fusion: FusionRule,
        rrf_k: int,
    ) -> None:
        self._embedder = embedder
        self._store = store
        self._bm25 = bm25
        self._registry = registry
        self._reranker = reranker
        self._reranker_label = reranker_label
        self._candidates = candidates
        self._fusion: FusionRule = fusion
        self._rrf_k = rrf_k
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="bm25-search")

    def languages(self, doc_ids: frozenset[str] | None = None) -> dict[str, int]:
        """How many indexed chunks each language holds, of the documents `doc_ids` (all when None)."""
        return self._bm25.languages(doc_ids)

    def _timed_bm25(
        self, query: str, query_lang: str | None, doc_ids: frozenset[str] | None
    ) -> tuple[dict[str, float], float]:
        started = time.perf_counter()
        return dict(self._bm25.search(query, self._candidates, query_lang, doc_ids)), _ms(started)

    def search(
        self,
        query: str,
        k: int,
        bm25_weight: float,
        rerank: bool = True,
        query_lang: str | None = None,
        doc_ids: frozenset[str] | None = None,
    ) -> Retrieval:
        """`query_lang`: the query's language, which BM25 tokenizes it for (besides the indexed ones);
        `doc_ids`: search only these documents (the ones the user selected), when given."""
        started = time.perf_counter()
        timings: dict[str, float] = {}
        reranker = self._reranker if rerank else None
        label = self._reranker_label if rerank else "none (turned off for this search)"
        live = self._registry.live_versions()
        if doc_ids is not None:
            live = {doc_id: version for doc_id, version in live.items() if doc_id in doc_ids}
        empty = Retrieval(
            query=query, hits=[], candidates=[], bm25_weight=bm25_weight, fusion=self._fusion, reranker=label
        )
        if not live:
            return empty

        # BM25 runs in a worker while the query is embedded and Chroma searched (ONNX Runtime, Chroma's
        # Rust core and most of numpy release the GIL).
        keyword = self._pool.submit(self._timed_bm25, query, query_lang, doc_ids) if bm25_weight > 0.0 else None
        query_vector = np.asarray(self._embedder.embed_query(query), dtype=np.float32)
        timings["embed_ms"] = _ms(started)
        mark = time.perf_counter()
        chunks: dict[str, Chunk] = {}
        dense: dict[str, float] = {}
        if bm25_weight < 1.0:
            for chunk, cosine in self._store.query(query_vector.tolist(), self._candidates, doc_ids):
                if live.get(chunk.doc_id) == chunk.content_hash:
                    chunks[chunk.chunk_id] = chunk
                    dense[chunk.chunk_id] = cosine
        timings["dense_ms"] = _ms(mark)
        bm25: dict[str, float] = {}
        if keyword is not None:
            bm25, timings["bm25_ms"] = keyword.result()

        mark = time.perf_counter()
        fused = fuse(bm25, dense, bm25_weight, self._fusion, self._rrf_k)
        # Only candidates that make the cut are fetched: BM25 returns ids, their text and vectors are in Chroma.
        best = sorted(fused, key=lambda cid: (-fused[cid], cid))[: self._candidates]
        similarity = dict(dense)
        fetched = self._store.get([cid for cid in best if cid not in chunks])
        for cid, (chunk, vector) in fetched.items():
            if live.get(chunk.doc_id) == chunk.content_hash:
                chunks[cid] = chunk
                similarity[cid] = _cosine(query_vector, vector)
        still_embedding = self._registry.still_embedding()
        if still_embedding:
            for cid, (chunk, cosine) in self._not_yet_embedded(
                [c for c in best if c not in chunks], live, query_vector
            ):
                chunks[cid], similarity[cid] = chunk, cosine
        bm25_ranks, dense_ranks = ranks(bm25), ranks(dense)
        ordered = [cid for cid in best if cid in chunks]
        candidates = [
            Hit(
                chunk=chunks[cid],
                scores=Scores(
                    bm25=bm25.get(cid),
                    bm25_rank=bm25_ranks.get(cid),
                    dense=self._embedder.comparable(similarity[cid]) if cid in similarity else None,
                    dense_rank=dense_ranks.get(cid),
                    fused=round(fused[cid], 6),
                ),
            )
            for cid in ordered
        ]
        timings["fuse_ms"] = _ms(mark)
        if reranker is not None:
            mark = time.perf_counter()
            candidates = reranker.rerank(query, candidates)
            timings["rerank_ms"] = _ms(mark)
        timings["search_ms"] = _ms(started)
        return empty.model_copy(
            update={
                "hits": candidates[:k],
                "candidates": candidates,
                "timings_ms": timings,
                "still_embedding": still_embedding,
            }
        )

    def _not_yet_embedded(
        self, chunk_ids: list[str], live: dict[str, str], query_vector: np.ndarray
    ) -> list[tuple[str, tuple[Chunk, float]]]:
        """BM25 candidates of a document whose ingest has not embedded them yet (progressive ingest):
        read from the registry and embedded now, so they are scored like every other candidate."""
        waiting = [c for c in self._registry.waiting_chunks(chunk_ids).values() if live.get(c.doc_id) == c.content_hash]
        if not waiting:
            return []
        vectors = self._embedder.embed([c.text for c in waiting])
        return [(c.chunk_id, (c, _cosine(query_vector, v))) for c, v in zip(waiting, vectors, strict=True)]


def _cosine(query: np.ndarray, vector: list[float]) -> float:
    other = np.asarray(vector, dtype=np.float32)
    denominator = float(np.linalg.norm(query) * np.linalg.norm(other)) or 1.0
    return float(query @ other) / denominator


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
