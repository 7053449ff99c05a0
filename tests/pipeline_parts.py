"""An Answerer over stand-in parts, for unit tests of the ask path (guardrails, top k): the real
guardrails, lexical support check and query log in a temporary SQLite file."""

from __future__ import annotations

from collections.abc import Callable

from rag.answerer import Answerer
from rag.conversations import ConversationStore
from rag.guardrails import Guardrails
from rag.llm.base import LLM
from rag.query_log import QueryLog
from rag.rate_limit import RateLimiter
from rag.support import SupportChecker
from ragchat.schemas import ModelInfo
from ragchat.settings import Settings


def build_answerer(settings: Settings, retriever: object, llm_factory: Callable[[], LLM]) -> Answerer:
    db = settings.db_path
    return Answerer(
        settings,
        retriever,  # type: ignore[arg-type]
        ConversationStore(db),
        llm_factory,
        lambda: ModelInfo(llm="recording", embedder="e", reranker="none"),
        Guardrails(settings.max_question_chars, RateLimiter(db, settings.rate_limit_per_minute)),
        SupportChecker(None, settings.support_min_overlap, settings.support_min_similarity),
        QueryLog(db),
    )
