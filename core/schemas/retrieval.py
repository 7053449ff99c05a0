"""What a search found and how each chunk scored."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.schemas.documents import Chunk


class Scores(BaseModel):
    """How a chunk was found. A rank is None when that retriever did not return the chunk; dense is
    the cosine similarity to the query for every candidate (it also gates refusal)."""

    bm25: float | None = None
    bm25_rank: int | None = None
    dense: float | None = None
    dense_rank: int | None = None
    fused: float | None = None
    rerank: float | None = None


class Hit(BaseModel):
    """A retrieved chunk with its scores; hits are ranked best first."""

    chunk: Chunk
    scores: Scores

    def to_contract(self) -> dict[str, object]:
        """The `ragchat search --json` shape from design.md."""
        return {
            "chunk_id": self.chunk.chunk_id,
            "source": self.chunk.source,
            "page": self.chunk.page or None,
            "locator": self.chunk.locator,
            "text": self.chunk.text,
            "scores": self.scores.model_dump(),
        }


class StillEmbedding(BaseModel):
    """A document keyword search finds while its semantic index is still being built."""

    source: str
    embedded_fraction: float = Field(ge=0.0, le=1.0)

    def describe(self) -> str:
        return f"keyword search only for {self.source}: semantic index {self.embedded_fraction:.0%}"


class Retrieval(BaseModel):
    """One search: the chunks for the model, and every candidate considered, in final order."""

    query: str
    hits: list[Hit]
    candidates: list[Hit]
    bm25_weight: float
    fusion: str
    reranker: str = Field(description="The cross-encoder that ran, or 'none (why)'.")
    timings_ms: dict[str, float] = Field(default_factory=dict)
    still_embedding: list[StillEmbedding] = Field(
        default_factory=list, description="Documents searched by keyword only so far (semantic index partial)."
    )
