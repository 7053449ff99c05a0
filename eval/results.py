"""What an evaluation run produces: per-question results, aggregates, latency, and comparisons."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from core.schemas import AbstentionScore, ModelInfo


class MetricValue(BaseModel):
    """A score, or None with the reason it could not be computed (judge NaN, timeout, bad JSON)."""

    value: float | None = None
    note: str | None = None


class CitedSource(BaseModel):
    marker: int
    source: str
    page: int | None = None
    chunk_id: str
    method: str
    supports: bool = Field(description="The cited chunk holds gold evidence (or, without gold, a reference).")


class QuestionResult(BaseModel):
    id: str
    question: str
    category: str
    conversation: str | None = None
    answerable: bool
    reference: str | None
    answer: str
    search_query: str
    translated_query: str | None = None
    refused: bool
    withheld: bool = Field(
        default=False, description="Refused because no passage held the model's reply (at every strictness level)."
    )
    withheld_reply: str | None = Field(
        default=None, description="The model's reply that was withheld: what the support check read."
    )
    restated: str | None = Field(
        default=None, description="The model's own answer, replaced because it did not state its answer phrase."
    )
    memory_writes: list[str] = Field(
        default_factory=list, description="Memory lines the question wrote (a question about documents writes none)."
    )
    error: str | None = None
    citations: list[CitedSource] = Field(default_factory=list)
    retrieved: list[str] = Field(default_factory=list, description="'source p.N' of the top-k chunks, best first.")
    given: list[str] = Field(
        default_factory=list, description="Chunk ids of the evidence the model was given, in prompt order ([1] first)."
    )
    abstention: AbstentionScore | None = Field(default=None, description="The answer-or-abstain score, when scored.")
    scores: dict[str, float | None] = Field(default_factory=dict, description="Our metrics; None: does not apply.")
    ragas: dict[str, MetricValue] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)


class Aggregate(BaseModel):
    value: float | None
    n: int = Field(description="Questions the metric applied to (and, for RAGAS, produced a number).")
    note: str | None = None


class TargetCheck(BaseModel):
    metric: str
    goal: Literal[">=", "<="]
    threshold: float
    value: float | None
    met: bool | None = Field(description="None when the metric had no questions to apply to.")


class EvalRun(BaseModel):
    dataset: str
    description: str = ""
    note: str = ""
    label: str = Field(default="run", description="Names the configuration in a comparison.")
    started_at: datetime
    duration_s: float
    models: ModelInfo
    settings: dict[str, object]
    llm_load_ms: float | None = None
    questions: list[QuestionResult]
    aggregates: dict[str, Aggregate]
    by_category: dict[str, dict[str, Aggregate]]
    latency_ms: dict[str, dict[str, float | None]] = Field(description="stage → {p50, p95, n}")
    targets: list[TargetCheck]
    warnings: list[str] = Field(default_factory=list)
    memory_given: list[str] = Field(
        default_factory=list, description="The memory entries the home started with (`ragchat eval --memory`)."
    )


class Delta(BaseModel):
    base: float | None
    variant: float | None
    delta: float | None


class Comparison(BaseModel):
    overrides: dict[str, str]
    base: EvalRun
    variant: EvalRun
    deltas: dict[str, Delta]
