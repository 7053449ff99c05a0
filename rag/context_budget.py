"""Choose how many retrieved chunks go into the prompt so it never overflows the model's context
and the time to the first token stays predictable (prefill time grows with prompt tokens).

Token counts are estimated by core.text.estimate_tokens (UTF-8 bytes ÷ 3, on the safe side).
"""

from __future__ import annotations

from core.schemas import Hit
from core.text import BYTES_PER_TOKEN, estimate_tokens


def source_budget(context_window: int, max_answer_tokens: int, fixed_text: str, cap: int, overhead: int) -> int:
    """Tokens left for sources once the fixed prompt parts (`overhead`: the chat template and the
    closing instruction) and the answer are reserved."""
    free = context_window - max_answer_tokens - estimate_tokens(fixed_text) - overhead
    return max(0, min(cap, free))


def fit_hits(hits: list[Hit], budget: int, header_tokens: int) -> list[Hit]:
    """The best hits, in order, while they fit (each costs its text plus `header_tokens` for its
    "[n] (source, page p)" line). The first hit is cut to the budget rather than dropped, so a
    question never loses its best source to a long chunk."""
    chosen: list[Hit] = []
    used = 0
    for hit in hits:
        cost = estimate_tokens(hit.chunk.text) + header_tokens
        if used + cost > budget:
            if not chosen and budget > header_tokens:
                limit = (budget - header_tokens) * BYTES_PER_TOKEN
                text = hit.chunk.text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
                chosen.append(hit.model_copy(update={"chunk": hit.chunk.model_copy(update={"text": text})}))
            break
        chosen.append(hit)
        used += cost
    return chosen
