"""Cross-encoder reranking with FlashRank, only when its model is on disk.

No PyPI package carries a FlashRank model, so on an offline machine there is no reranker and the
pipeline says so (`Reranker.label`, shown in the UI and in every answer's metadata) instead of
pretending. The model folder is looked up in RAGCHAT_RERANKER_DIR (FlashRank's cache layout:
<dir>/<model name>/...); FlashRank downloads it there only when RAGCHAT_RERANKER_DOWNLOAD=true.
"""

from __future__ import annotations

import logging

from core.schemas import Hit
from core.settings import Settings

log = logging.getLogger(__name__)


class Reranker:
    """Reorders hits by a cross-encoder's score of (query, chunk text)."""

    def __init__(self, settings: Settings) -> None:
        from flashrank import Ranker

        self.model = settings.reranker_model
        self._ranker = Ranker(
            model_name=self.model,
            cache_dir=str(settings.reranker_dir),
            max_length=settings.reranker_max_length,
            log_level="WARNING",
        )
        self.label = f"flashrank · {self.model}"

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        from flashrank import RerankRequest

        if not hits:
            return []
        passages = [{"id": i, "text": hit.chunk.text} for i, hit in enumerate(hits)]
        ranked = self._ranker.rerank(RerankRequest(query=query, passages=passages))
        result: list[Hit] = []
        for passage in ranked:
            hit = hits[passage["id"]]
            result.append(
                hit.model_copy(update={"scores": hit.scores.model_copy(update={"rerank": float(passage["score"])})})
            )
        return result


def load_reranker(settings: Settings) -> tuple[Reranker | None, str]:
    """The reranker, or None with the reason shown to the user."""
    name = settings.reranker_model
    if name == "none":
        return None, "none (turned off: RAGCHAT_RERANKER_MODEL=none)"
    from flashrank.Config import model_file_map

    if name not in model_file_map:
        return None, f"none ({name!r} is not a FlashRank model; known: {', '.join(sorted(model_file_map))})"
    folder = settings.reranker_dir / name
    if not (folder / model_file_map[name]).exists() and not settings.reranker_download:
        return None, (
            f"none ({name} is not in {settings.reranker_dir}; set RAGCHAT_RERANKER_DOWNLOAD=true "
            "to let FlashRank download it, or copy the model folder there)"
        )
    try:
        reranker = Reranker(settings)
    except Exception as exc:  # a broken or partial download must not take search down
        log.warning("reranker %s failed to load: %s", name, exc)
        return None, f"none ({name} failed to load: {exc})"
    return reranker, reranker.label
