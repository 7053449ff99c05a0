"""The FlashRank path for real, with the tiny cross-encoder the project builds as a fixture, and the
honest no-reranker path."""

from __future__ import annotations

from pathlib import Path

from core.schemas import Hit
from core.settings import Settings
from providers.reranker import load_reranker
from tests.chunks import text_hit
from tests.conftest import TINY_RERANKER_DIR

TINY = "ms-marco-TinyBERT-L-2-v2"


def hit(cid: str, text: str) -> Hit:
    return text_hit(text, chunk_id=cid, dense=0.3, fused=0.01)


def test_flashrank_reorders_by_cross_encoder_score() -> None:
    reranker, label = load_reranker(Settings(reranker_model=TINY, reranker_dir=TINY_RERANKER_DIR))
    assert reranker is not None and label == f"flashrank · {TINY}"
    hits = [hit("cat", "the cat sat on a mat"), hit("flood", "flood risk of the river is high"), hit("rain", "rain")]
    ranked = reranker.rerank("what is the river flood risk", hits)
    assert ranked[0].chunk.chunk_id == "flood" and {h.chunk.chunk_id for h in ranked} == {"flood", "cat", "rain"}
    scores = [h.scores.rerank for h in ranked]
    assert scores[0] is not None and scores[0] > 0.7 > max(s for s in scores[1:] if s is not None)
    assert ranked[0].scores.fused == 0.01  # earlier scores are kept beside the rerank score


def test_missing_model_is_reported_not_downloaded(tmp_path: Path) -> None:
    reranker, label = load_reranker(Settings(reranker_model="ms-marco-MiniLM-L-12-v2", reranker_dir=tmp_path))
    assert reranker is None
    assert label.startswith("none (ms-marco-MiniLM-L-12-v2 is not in") and "RAGCHAT_RERANKER_DOWNLOAD" in label
    assert list(tmp_path.iterdir()) == []


def test_turned_off_and_unknown_models_say_so(tmp_path: Path) -> None:
    assert load_reranker(Settings(reranker_model="none", reranker_dir=tmp_path)) == (
        None,
        "none (turned off: RAGCHAT_RERANKER_MODEL=none)",
    )
    reranker, label = load_reranker(Settings(reranker_model="bge-giant", reranker_dir=tmp_path))
    assert reranker is None and "'bge-giant' is not a FlashRank model" in label
