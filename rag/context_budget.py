"""Choose how many retrieved chunks go into the prompt so it never overflows the model's context
and the time to the first token stays predictable (prefill time grows with prompt tokens).

Token counts are estimated as UTF-8 bytes ÷ 3. That over-counts English for the Qwen and Llama BPE
vocabularies (about 4 bytes a token) and is about right for CJK (3 bytes a character, about one
token each), so the estimate errs on the safe side; bench/time_to_first_token.py prints the ratio
of estimated to actual prompt tokens.
"""

from __future__ import annotations

from ragchat.schemas import Hit

BYTES_PER_TOKEN = 3
PROMPT_OVERHEAD_TOKENS = 64  # chat template markers, source headers and the closing instruction


def estimate_tokens(text: str) -> int:
    return len(text.encode("utf-8")) // BYTES_PER_TOKEN + 1


def source_budget(context_window: int, max_answer_tokens: int, fixed_text: str, cap: int) -> int:
    """Tokens left for sources once the fixed prompt parts and the answer are reserved."""
    free = context_window - max_answer_tokens - estimate_tokens(fixed_text) - PROMPT_OVERHEAD_TOKENS
    return max(0, min(cap, free))


def fit_hits(hits: list[Hit], budget: int) -> list[Hit]:
    """The best hits, in order, while they fit. The first hit is cut to the budget rather than dropped,
    so a question never loses its best source to a long chunk."""
    chosen: list[Hit] = []
    used = 0
    for hit in hits:
        cost = estimate_tokens(hit.chunk.text) + 16  # header line: "[n] (source, page p)"
        if used + cost > budget:
            if not chosen and budget > 16:
                limit = (budget - 16) * BYTES_PER_TOKEN
                text = hit.chunk.text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
                chosen.append(hit.model_copy(update={"chunk": hit.chunk.model_copy(update={"text": text})}))
            break
        chosen.append(hit)
        used += cost
    return chosen
