"""Parsed documents, their chunks, and how the index holds them."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

FileType = Literal["pdf", "txt", "md"]


ChunkKind = Literal["text", "code"]


class PageHeading(BaseModel):
    """A heading line of a PDF page, found by its type size (ingestion/outline.py)."""

    title: str
    size: float = Field(description="Its type size in points: a heading closes the open ones set no larger.")


class Page(BaseModel):
    """One page of parsed text. TXT and Markdown are a single page numbered 0."""

    number: int
    text: str
    headings: list[PageHeading] = Field(default_factory=list, description="A PDF page's heading lines, in order.")
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
    page: int = Field(description="1-based page number; 0 for TXT and Markdown (they have no pages).")
    chunk_index: int = Field(description="Position of the chunk within its document.")
    text: str
    char_start: int = Field(description="Offset of the chunk in its page's text.")
    char_end: int
    heading_path: list[str] = Field(default_factory=list)
    title: str = Field(default="", description="The document's title (searched with the chunk, not shown in it).")
    kind: ChunkKind = Field(default="text", description="code: a whole fenced code block, verbatim.")
    line_start: int | None = Field(default=None, description="TXT/Markdown: 1-based first line of the chunk.")
    line_end: int | None = Field(default=None, description="TXT/Markdown: its last line.")
    lang: str = Field(
        default="en", description="The chunk's language (ISO 639-1), detected at ingest; BM25 stems it for that."
    )

    @property
    def keyword_text(self) -> str:
        """What keyword search indexes: the chunk under its document's title and section path, so that
        a passage is found by the names of what it belongs to. The embedder gets the chunk's text alone:
        on the real-documents set the prefix lowered semantic search's top 4 (0.669 → 0.623), while
        BM25 with it rose (0.677; bench/results-real-documents.md)."""
        path = [part for part in [self.title, *self.heading_path] if part]
        path = [part for n, part in enumerate(path) if part not in path[:n]]
        return f"{' › '.join(path)}\n{self.text}" if path else self.text

    @property
    def locator(self) -> str:
        """Where a person finds this chunk: a PDF's page, the heading path, then the lines of a text
        file (its character range when an older index kept no lines; a PDF's characters on its page)."""
        parts: list[str] = []
        if self.page:
            parts.append(f"p. {self.page}")
        if self.heading_path:
            parts.append(" › ".join(self.heading_path))
        if self.line_start is not None and self.line_end is not None:
            parts.append(
                f"line {self.line_start}"
                if self.line_start == self.line_end
                else f"lines {self.line_start}–{self.line_end}"
            )
        else:
            parts.append(f"chars {self.char_start}–{self.char_end}")
        return " · ".join(parts)

    def excerpt(self, start: int, end: int) -> Chunk:
        """The part text[start:end] of this chunk, with its offsets (and lines) moved to match."""
        update: dict[str, object] = {
            "text": self.text[start:end],
            "char_start": self.char_start + start,
            "char_end": self.char_start + end,
        }
        if self.line_start is not None:
            first = self.line_start + self.text.count("\n", 0, start)
            update |= {"line_start": first, "line_end": first + self.text.count("\n", start, max(start, end - 1))}
        return self.model_copy(update=update)


class IngestNotes(BaseModel):
    """What a person should know about how a file was read, kept with the document."""

    encoding: str | None = Field(default=None, description="Text encoding detected for TXT/Markdown.")
    no_text_pages: list[int] = Field(default_factory=list, description="PDF pages without a text layer.")
    ocr_pages: list[int] = Field(default_factory=list, description="Pages whose text Tesseract read from the image.")
    redacted: bool = Field(default=False, description="PII redaction was on for this version.")
    redactions: int = Field(default=0, description="Values replaced by placeholders (see the redaction report).")
    warnings: list[str] = Field(default_factory=list)
    title: str = Field(default="", description="The document's title: a PDF's metadata title or its largest heading.")


class DocumentRecord(IngestNotes):
    """A row of the document registry."""

    doc_id: str
    source: str
    file_type: FileType
    content_hash: str = Field(description="Version: sha256 of the bytes (and of the redaction option when on).")
    size_bytes: int
    pages: int | None = Field(description="A PDF's page count; None for TXT and Markdown, which have no pages.")
    chunks: int
    ingested_at: datetime
    missing_chunks: int = Field(
        default=0,
        description="Chunks the vector store no longer holds (found at start-up): the document is not fully "
        "searchable until the index is rebuilt or the file uploaded again.",
    )
    pending_chunks: int = Field(
        default=0,
        description="Chunks keyword search already finds but that are not embedded yet: semantic search "
        "covers the document once this is 0 (progressive ingest).",
    )

    @property
    def embedded_fraction(self) -> float:
        """How much of the document semantic search covers, 0 to 1."""
        return 1.0 - self.pending_chunks / self.chunks if self.chunks else 1.0

    def embedding_note(self) -> str:
        """What `ragchat docs` and the app say about a document still being embedded."""
        return (
            f"keyword search only for now: semantic index {self.embedded_fraction:.0%} "
            f"({self.chunks - self.pending_chunks} of {self.chunks} chunks embedded)"
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
    pages: int | None = Field(default=None, description="A PDF's page count; None for TXT and Markdown (no pages).")
    chunks: int = 0
    error: str | None = None
    needs_password: bool = Field(default=False, description="An encrypted PDF: ask for its password and retry.")
    seconds: float = Field(default=0.0, description="From the start of the ingest until it was fully indexed.")
    searchable_s: float | None = Field(
        default=None,
        description="From the start of the ingest until keyword search found the document (before it was "
        "embedded); None when it became searchable only once fully indexed (a replaced version).",
    )


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
    searchable: bool = Field(default=False, description="Keyword search already finds the document.")
    chunks_embedded: int = 0
    embedding_since_s: float | None = Field(
        default=None, description="elapsed_s when embedding began (all pages read and chunked)."
    )

    @property
    def embedding(self) -> bool:
        return self.embedding_since_s is not None

    def describe(self) -> str:
        """One line for a progress display: the stage, how far, the rate and the time left."""
        parts = [self.stage]
        if self.embedding and self.chunks:
            parts.append(f"{self.fraction:.0%} embedded")
            if self.rate:
                parts.append(f"{self.rate:.1f} chunks/s")
        elif self.pages_total > 1:
            parts.append(f"{self.pages_done}/{self.pages_total} pages")
        if self.eta_s is not None:
            parts.append(f"~{_duration(self.eta_s)} left")
        if self.searchable:
            parts.append("already searchable by keyword")
        return " · ".join(parts)

    @property
    def fraction(self) -> float:
        """Pages read while reading; chunks embedded once embedding has begun."""
        if self.embedding:
            return min(self.chunks_embedded / self.chunks, 1.0) if self.chunks else 0.0
        return min(self.pages_done / self.pages_total, 1.0) if self.pages_total else 0.0

    @property
    def rate(self) -> float | None:
        """Chunks embedded per second so far; None until some are."""
        if self.embedding_since_s is None or not self.chunks_embedded:
            return None
        return self.chunks_embedded / max(self.elapsed_s - self.embedding_since_s, 1e-6)

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate so far; None until a page (or, embedding, a chunk) is done."""
        if self.embedding:
            rate = self.rate
            return max((self.chunks - self.chunks_embedded) / rate, 0.0) if rate else None
        if not self.pages_done or not self.pages_total:
            return None
        return max(self.elapsed_s / self.pages_done * (self.pages_total - self.pages_done), 0.0)


class IndexManifest(BaseModel):
    """What the stored vectors and chunks were made with; another setting means a rebuild."""

    embed_provider: str = "fastembed"
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


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
