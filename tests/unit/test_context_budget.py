from __future__ import annotations

from core.schemas import Hit
from core.text import estimate_prompt_tokens, estimate_tokens
from rag.context_budget import fit_hits, source_budget
from tests.chunks import text_hit


def hit(text: str, index: int = 0) -> Hit:
    return text_hit(text, chunk_id=f"c{index}", index=index)


def test_estimate_errs_high_for_english_and_counts_cjk_per_character() -> None:
    english = "The warehouse network spans eleven sites along the northern coast. " * 10
    assert estimate_tokens(english) >= len(english) / 4  # BPE tokenizers average ~4 chars a token in English
    assert estimate_tokens("倉庫" * 50) >= 100


def test_a_prompts_figures_count_a_token_per_digit() -> None:
    """Qwen writes every digit as a token: a row of figures is read three times slower than its bytes say."""
    row = "Kentucky 264,140 2,236,457 14,581 " * 10
    assert estimate_prompt_tokens(row) >= sum(c.isdigit() for c in row)
    assert estimate_prompt_tokens(row) > 1.5 * estimate_tokens(row)
    prose = "The warehouse network spans eleven sites along the northern coast. " * 10
    assert estimate_prompt_tokens(prose) == estimate_tokens(prose)


def test_hits_are_taken_in_order_until_the_budget_is_spent() -> None:
    hits = [hit("word " * 60, i) for i in range(5)]  # ~100 tokens + header each
    chosen = fit_hits(hits, budget=250, header_tokens=16)
    assert [h.chunk.chunk_id for h in chosen] == ["c0", "c1"]


def test_a_long_first_hit_is_cut_not_dropped() -> None:
    chosen = fit_hits([hit("x" * 9000)], budget=100, header_tokens=16)
    assert len(chosen) == 1 and estimate_tokens(chosen[0].chunk.text) <= 100


def test_budget_reserves_the_answer_and_the_fixed_prompt_and_respects_the_cap() -> None:
    assert source_budget(4096, 384, "q" * 300, cap=1500, overhead=64) == 1500
    small = source_budget(1024, 384, "q" * 300, cap=1500, overhead=64)
    assert small == 1024 - 384 - estimate_tokens("q" * 300) - 64
    assert source_budget(256, 384, "q", cap=1500, overhead=64) == 0
