"""Typed data passed between pipeline stages. A stage takes and returns these, nothing ad hoc."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

FileType = Literal["pdf", "txt", "md"]


class Page(BaseModel):
    """One page of parsed text. TXT and Markdown are a single page numbered 0."""

    number: int
    text: str
    table_count: int = 0


class Document(BaseModel):
    """A parsed file, before chunking."""

    source: str
    file_type: FileType
    content_hash: str
    size_bytes: int
    pages: list[Page]

    @property
    def doc_id(self) -> str:
        return doc_id_for(self.source)


def doc_id_for(source: str) -> str:
    """Documents are keyed by their name: a new version of a file replaces the old one."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


class Chunk(BaseModel):
    """A retrievable span of one page, with where it came from."""

    chunk_id: str
    doc_id: str
    content_hash: str = Field(description="Hash of the document version this chunk belongs to.")
    source: str
    file_type: FileType
    page: int = Field(description="1-based page number; 0 for TXT and Markdown.")
    chunk_index: int = Field(description="Position of the chunk within its document.")
    text: str
    char_start: int = Field(description="Offset of the chunk in its page's text.")
    char_end: int
    heading_path: list[str] = Field(default_factory=list)

    @property
    def locator(self) -> str:
        """Where a person finds this chunk: page and heading path, or character range."""
        parts: list[str] = []
        if self.page:
            parts.append(f"p. {self.page}")
        if self.heading_path:
            parts.append(" › ".join(self.heading_path))
        parts.append(f"chars {self.char_start}–{self.char_end}")
        return " · ".join(parts)


class DocumentRecord(BaseModel):
    """A row of the document registry."""

    doc_id: str
    source: str
    file_type: FileType
    content_hash: str
    size_bytes: int
    pages: int
    chunks: int
    ingested_at: datetime


class IngestResult(BaseModel):
    source: str
    status: Literal["indexed", "unchanged", "failed"]
    pages: int = 0
    chunks: int = 0
    error: str | None = None
    seconds: float = 0.0


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
            "page": self.chunk.page,
            "locator": self.chunk.locator,
            "text": self.chunk.text,
            "scores": self.scores.model_dump(),
        }


class Retrieval(BaseModel):
    """One search: the chunks for the model, and every candidate considered, in final order."""

    query: str
    hits: list[Hit]
    candidates: list[Hit]
    bm25_weight: float
    fusion: str
    reranker: str = Field(description="The cross-encoder that ran, or 'none (why)'.")
    timings_ms: dict[str, float] = Field(default_factory=dict)


class Citation(BaseModel):
    """A checkable pointer from an answer to the chunk that supports it."""

    marker: int = Field(description="The [n] the answer uses for this source.")
    source: str
    page: int
    chunk_id: str
    locator: str
    snippet: str
    method: Literal["marker", "support"] = Field(
        default="marker",
        description="marker: the model wrote [n]; support: the model cited nothing and the chunk "
        "was attributed by word overlap with the answer.",
    )


class ModelInfo(BaseModel):
    llm: str
    embedder: str
    reranker: str


LLMProvider = Literal["llamacpp", "ollama", "openai"]
LLMState = Literal["not loaded", "loading", "ready", "failed"]


class LLMChoice(BaseModel):
    """The provider and model that answer; `note` says why, when `auto` picked it."""

    provider: LLMProvider
    model: str = Field(description="llamacpp: a packaged name or a .gguf path; ollama: a tag; openai: the served name.")
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.model}"


class LLMOption(BaseModel):
    """A model the app offers to switch to (RagService.llm_options)."""

    provider: LLMProvider
    model: str
    label: str
    available: bool = True
    hint: str = Field(default="", description="When not available: why, and how to make it so.")

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.model}"


class LLMStatus(BaseModel):
    """Where the answering model stands: the app's model status line."""

    state: LLMState
    label: str = Field(description="The loaded model's label, else the chosen provider and model.")
    key: str = Field(default="", description="LLMChoice.key of the chosen model; empty when it cannot be resolved.")
    error: str | None = None


class MemoryDecision(BaseModel):
    """What the memory model decided about one statement (its JSON output, validated)."""

    should_write: bool
    target: Literal["USER", "COMPANY", "none"]
    summary: str = Field(max_length=300)
    confidence: float = Field(ge=0.0, le=1.0)


class MemoryWrite(BaseModel):
    """One line the memory graph wrote (added, or put in place of a stale one)."""

    target: Literal["USER", "COMPANY"]
    summary: str
    confidence: float = 1.0
    action: Literal["added", "replaced"] = "added"
    replaced: str | None = Field(default=None, description="The stale entry this one replaced.")


class MemorySkip(BaseModel):
    """A statement the memory graph looked at and did not write, and why."""

    text: str
    reason: str


class MemoryOutcome(BaseModel):
    """What one chat turn did to memory."""

    writes: list[MemoryWrite] = Field(default_factory=list)
    skipped: list[MemorySkip] = Field(default_factory=list)

    @property
    def note(self) -> str:
        """The chat's account of it: what was noted, and any secret that was not."""
        parts = [
            f"Noted in {w.target.lower()} memory: {w.summary}" + (f" (replaces: {w.replaced})" if w.replaced else "")
            for w in self.writes
        ]
        parts += [
            f"Not saved: {s.reason}. Passwords, keys, tokens and card numbers are never written to memory."
            for s in self.skipped
            if s.reason.startswith("it holds")
        ]
        if not parts and self.skipped:
            parts.append(f"Nothing to remember ({self.skipped[0].reason}).")
        return "\n".join(parts)


class MemoryFacts(BaseModel):
    """The entries of USER_MEMORY.md and COMPANY_MEMORY.md, in file order."""

    user: list[str] = Field(default_factory=list)
    company: list[str] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.user or self.company)


class MemoryEvent(MemoryWrite):
    """A memory write as logged: when, and in which conversation."""

    at: datetime
    session_id: str | None = None


class Answer(BaseModel):
    """The result of one question, in the `ragchat ask --json` shape."""

    question: str
    search_query: str = Field(description="What was searched: the question, or its standalone rewrite.")
    session_id: str | None = None
    answer: str
    refused: bool
    citations: list[Citation] = Field(default_factory=list)
    memory_writes: list[MemoryWrite] = Field(default_factory=list)
    memory_note: str | None = Field(default=None, description="What the memory graph did with this turn, in words.")
    memory_used: MemoryFacts = Field(
        default_factory=MemoryFacts, description="Memory entries given to the model as context (never cited)."
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
    models: ModelInfo
    error: str | None = Field(default=None, description="Why the model stopped early, if it did.")
    hits: list[Hit] = Field(default_factory=list, exclude=True)
