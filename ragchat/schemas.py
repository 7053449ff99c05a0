"""Typed data passed between pipeline stages. A stage takes and returns these, nothing ad hoc."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, computed_field

FileType = Literal["pdf", "txt", "md"]


ChunkKind = Literal["text", "code"]


class Page(BaseModel):
    """One page of parsed text. TXT and Markdown are a single page numbered 0."""

    number: int
    text: str
    table_count: int = 0
    had_text_layer: bool = Field(default=True, description="False for a PDF page with no extractable text (a scan).")
    ocr: bool = Field(default=False, description="The text was read from the page image by Tesseract.")


class Document(BaseModel):
    """A parsed file, before chunking."""

    source: str
    file_type: FileType
    content_hash: str
    size_bytes: int
    pages: list[Page]
    encoding: str | None = None

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
    kind: ChunkKind = Field(default="text", description="code: a whole fenced code block, verbatim.")

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


class IngestNotes(BaseModel):
    """What a person should know about how a file was read, kept with the document."""

    encoding: str | None = Field(default=None, description="Text encoding detected for TXT/Markdown.")
    no_text_pages: list[int] = Field(default_factory=list, description="PDF pages without a text layer.")
    ocr_pages: list[int] = Field(default_factory=list, description="Pages whose text Tesseract read from the image.")
    redacted: bool = Field(default=False, description="PII redaction was on for this version.")
    redactions: int = Field(default=0, description="Values replaced by placeholders (see the redaction report).")
    warnings: list[str] = Field(default_factory=list)


class DocumentRecord(IngestNotes):
    """A row of the document registry."""

    doc_id: str
    source: str
    file_type: FileType
    content_hash: str = Field(description="Version: sha256 of the bytes (and of the redaction option when on).")
    size_bytes: int
    pages: int
    chunks: int
    ingested_at: datetime
    missing_chunks: int = Field(
        default=0,
        description="Chunks the vector store no longer holds (found at start-up): the document is not fully "
        "searchable until the index is rebuilt or the file uploaded again.",
    )

    def missing_note(self) -> str:
        """What `ragchat docs` and the app say about a document with missing chunks."""
        return (
            f"{self.missing_chunks} of its {self.chunks} chunks are gone from the vector store, so it is not fully "
            "searchable: rebuild the index (`ragchat reindex`, or the app's Rebuild index) or upload it again"
        )


class IngestResult(IngestNotes):
    """One file's outcome, in the `ragchat ingest --json` shape (design.md), plus the notes above.
    cancelled: the user stopped it in the app and the index is as it was before."""

    source: str
    status: Literal["indexed", "unchanged", "failed", "cancelled"]
    pages: int = 0
    chunks: int = 0
    error: str | None = None
    needs_password: bool = Field(default=False, description="An encrypted PDF: ask for its password and retry.")
    seconds: float = 0.0


class Redaction(BaseModel):
    """One value replaced at ingest. The value itself is not kept: only a masked preview."""

    page: int
    kind: Literal["email", "phone", "ip", "token"]
    placeholder: str
    preview: str


class IngestProgress(BaseModel):
    """A running ingest as the UI polls it."""

    stage: str
    pages_done: int = 0
    pages_total: int = 0
    chunks: int = 0
    elapsed_s: float = 0.0

    @property
    def fraction(self) -> float:
        return min(self.pages_done / self.pages_total, 1.0) if self.pages_total else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate so far; None until a page is done."""
        if not self.pages_done or not self.pages_total:
            return None
        return max(self.elapsed_s / self.pages_done * (self.pages_total - self.pages_done), 0.0)


class IndexManifest(BaseModel):
    """What the stored vectors and chunks were made with; another setting means a rebuild."""

    embed_model: str
    embed_model_path: str | None = None
    embed_max_tokens: int | None = None
    chunk_size: int
    chunk_overlap: int
    chunker: int = Field(description="Version of the chunking rules (ingestion/chunking.py CHUNKER_VERSION).")

    def differences(self, other: IndexManifest) -> list[str]:
        """Human-readable 'field: stored → wanted' lines."""
        mine, theirs = self.model_dump(), other.model_dump()
        return [f"{key}: {mine[key]} → {theirs[key]}" for key in mine if mine[key] != theirs[key]]


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
    method: Literal["marker", "support", "corrected"] = Field(
        default="marker",
        description="marker: the model wrote [n]; support: the model cited nothing and the chunk "
        "was attributed by word overlap with the answer; corrected: the model cited another source, "
        "which lacks the sentence's figures or words that this one holds.",
    )
    cited_as: int | None = Field(default=None, description="The source number the model wrote, when corrected.")


class ModelInfo(BaseModel):
    llm: str
    embedder: str
    reranker: str
    vector_store: str = Field(default="", description="Which Chroma ran: embedded (its path) or a server (its URL).")


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


class SentenceSupport(BaseModel):
    """One sentence of an answer, checked against the chunks it cites (rag/support.py)."""

    sentence: str
    supported: bool
    score: float = Field(ge=0.0, le=1.0, description="How well the sources cover the sentence, 0 to 1.")
    overlap: float = Field(description="Share of the sentence's terms (stemmed, no stopwords) found in its sources.")
    similarity: float | None = Field(
        default=None, description="Best cosine similarity to one sentence of its sources (None: not embedded)."
    )
    missing: list[str] = Field(
        default_factory=list, description="Numbers and names in the sentence that its sources do not contain."
    )
    sources: list[int] = Field(default_factory=list, description="The [n] of the chunks it was checked against.")


class GuardrailOutcome(BaseModel):
    """Why a question was stopped before retrieval (rag/guardrails.py)."""

    rule: Literal["length", "injection", "rate_limit"]
    message: str = Field(description="The calm notice the user sees, which says what to do.")
    retry_after_s: float | None = Field(default=None, description="rate_limit: seconds until a question is accepted.")


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
    confidence: float | None = Field(
        default=None,
        description="How well the cited sources support the answer, 0 to 1 (None: nothing to check, e.g. a "
        "refusal, a memory answer or a guardrail notice).",
    )
    low_confidence: bool = Field(default=False, description="confidence is below RAGCHAT_MIN_CONFIDENCE.")
    support: list[SentenceSupport] = Field(
        default_factory=list, description="Each checked sentence of the answer and whether its sources support it."
    )
    guardrail: GuardrailOutcome | None = Field(
        default=None, description="Set when a guardrail stopped the question before retrieval."
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
    models: ModelInfo
    error: str | None = Field(default=None, description="Why the model stopped early, if it did.")
    incomplete: bool = Field(
        default=False,
        description="The model stopped before finishing (error says why): answer is the partial text it wrote.",
    )
    hits: list[Hit] = Field(default_factory=list, exclude=True)

    @computed_field  # in `ask --json`, for scripts that only want the flagged sentences
    @property
    def unsupported_sentences(self) -> list[str]:
        return [s.sentence for s in self.support if not s.supported]


class LoggedChunk(BaseModel):
    """A retrieval candidate as the query log keeps it: where it is and how it scored, no text."""

    chunk_id: str
    source: str
    page: int
    scores: Scores
    given: bool = Field(description="Whether the chunk went into the model's prompt.")


class QueryLogEntry(BaseModel):
    """One row of the query log (rag/query_log.py); every text field is masked before it is written."""

    id: int
    at: datetime
    session_id: str | None
    question: str
    search_query: str
    answer: str
    refused: bool
    guardrail: Literal["length", "injection", "rate_limit"] | None
    confidence: float | None
    low_confidence: bool
    unsupported: int = Field(description="How many answer sentences its sources did not support.")
    retrieved: list[LoggedChunk]
    citations: list[Citation]
    models: ModelInfo
    timings_ms: dict[str, float]
    error: str | None = None
