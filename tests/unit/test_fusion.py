from __future__ import annotations

import pytest

from rag.fusion import fuse, ranks

BM25 = {"a": 12.0, "b": 7.5, "c": 1.0}
DENSE = {"c": 0.81, "d": 0.80, "a": 0.40}


def order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda cid: (-scores[cid], cid))


@pytest.mark.parametrize("rule", ["rrf", "convex"])
def test_weight_zero_is_dense_only_and_one_is_bm25_only(rule: str) -> None:
    assert order(fuse(BM25, DENSE, 0.0, rule)) == order(DENSE)
    assert order(fuse(BM25, DENSE, 1.0, rule)) == order(BM25)


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = fuse(BM25, DENSE, 0.25, "rrf")
    assert fused["a"] == pytest.approx(0.25 / 61 + 0.75 / 63)
    assert fused["d"] == pytest.approx(0.75 / 62)
    assert order(fused)[0] == "c"  # second in BM25 and first in dense beats first-in-one-list


def test_convex_normalizes_each_list_to_0_1() -> None:
    fused = fuse(BM25, DENSE, 0.5, "convex")
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert fused["c"] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert fused["d"] == pytest.approx(0.5 * (0.80 - 0.40) / (0.81 - 0.40))


def test_weight_outside_0_1_is_rejected() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        fuse(BM25, DENSE, 1.5, "convex")


def test_ranks_are_one_based_best_first() -> None:
    assert ranks(DENSE) == {"c": 1, "d": 2, "a": 3}
