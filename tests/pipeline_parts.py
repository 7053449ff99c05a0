"""An AnswerPipeline over stand-in parts, for unit tests of the ask path (guardrails, top k): the real
guardrails, lexical support check and query log in a temporary SQLite file."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable

from core.schemas import ModelInfo
from core.settings import Settings
from providers.llm.base import LLM
from rag.conversations import ConversationStore
from rag.guardrails import Guardrails
from rag.pipeline import AnswerPipeline
from rag.query_log import QueryLog
from rag.rate_limit import RateLimiter
from rag.stages import MemoryPort
from rag.support import SupportChecker


def build_pipeline(
    settings: Settings, retriever: object, llm_factory: Callable[[], LLM], memory: MemoryPort | None = None
) -> AnswerPipeline:
    db = settings.db_path
    return AnswerPipeline(
        settings,
        retriever,  # type: ignore[arg-type]
        ConversationStore(db),
        llm_factory,
        lambda: ModelInfo(llm="recording", embedder="e", reranker="none"),
        Guardrails(settings.max_question_chars, RateLimiter(db, settings.rate_limit_per_minute)),
        SupportChecker(
            None, settings.support_min_term_share, settings.support_min_similarity, settings.support_min_terms
        ),
        QueryLog(db),
        word_vectors,
        memory,
    )


def word_vectors(texts: list[str]) -> list[list[float]]:
    """A stand-in embedder: each word adds 1 to one of 64 dimensions (sentences sharing words are close)."""
    vectors = []
    for text in texts:
        vector = [0.0] * 64
        for word in re.findall(r"\w+", text.lower()):
            vector[zlib.crc32(word.encode()) % 64] += 1.0
        vectors.append(vector)
    return vectors
