"""Fusing the BM25 and dense rankings with one weight, w = the share given to BM25.

Two rules, both exact at the ends (w = 0 is dense-only, w = 1 is BM25-only, nothing else mixed in):
- "convex" (default): w · minmax(bm25) + (1 - w) · minmax(cosine) over each retriever's candidates; a
  chunk missing from one list counts 0 there. It keeps how far apart the scores are, which ranks throw
  away, and measured best (bench/retrieval.py; ARCHITECTURE.md has the table).
- "rrf", weighted reciprocal-rank fusion: score = w / (k + rank_bm25) + (1 - w) / (k + rank_dense),
  k = RAGCHAT_RRF_K (60).
  It uses ranks only, so it is immune to score scales but blind to a clear winner.
"""

from __future__ import annotations

from typing import Literal

FusionRule = Literal["rrf", "convex"]


def fuse(
    bm25: dict[str, float], dense: dict[str, float], bm25_weight: float, rule: FusionRule, rrf_k: int = 60
) -> dict[str, float]:
    """Fused score per chunk id, from each retriever's {chunk_id: score}. Only chunks found by a
    retriever with a non-zero weight are scored."""
    if not 0.0 <= bm25_weight <= 1.0:
        raise ValueError(f"bm25_weight must be between 0 and 1, not {bm25_weight}")
    lists = [(bm25, bm25_weight), (dense, 1.0 - bm25_weight)]
    fused: dict[str, float] = {}
    for scores, weight in lists:
        if weight == 0.0:
            continue
        for chunk_id, value in _rank_scores(scores, rrf_k).items() if rule == "rrf" else _minmax(scores).items():
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight * value
    return fused


def ranks(scores: dict[str, float]) -> dict[str, int]:
    """1-based rank of each chunk id, best score first (ties broken by id, for stable output)."""
    ordered = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return {cid: rank for rank, cid in enumerate(ordered, start=1)}


def _rank_scores(scores: dict[str, float], rrf_k: int) -> dict[str, float]:
    return {cid: 1.0 / (rrf_k + rank) for cid, rank in ranks(scores).items()}


def _minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {cid: (value - low) / (high - low) for cid, value in scores.items()}
