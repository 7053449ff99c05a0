"""Chunks and retrieval hits that unit tests build from a text: one builder, so a new Chunk field is
added in one place. The file type follows the source's suffix; the span covers the text."""

from __future__ import annotations

from pathlib import Path

from core.schemas import Chunk, Hit, Scores


def text_chunk(
    text: str,
    *,
    chunk_id: str = "c",
    source: str = "s.txt",
    page: int = 0,
    index: int = 0,
    char_start: int = 0,
    lang: str = "en",
    doc_id: str = "d",
    content_hash: str = "h",
) -> Chunk:
    return Chunk(
        chunk_id=chunk_id,
        doc_id=doc_id,
        content_hash=content_hash,
        source=source,
        file_type=Path(source).suffix.lstrip(".") or "txt",
        page=page,
        chunk_index=index,
        text=text,
        char_start=char_start,
        char_end=char_start + len(text),
        lang=lang,
    )


def text_hit(text: str, *, dense: float = 0.5, fused: float | None = None, **chunk: object) -> Hit:
    """A hit on text_chunk(text, **chunk) with these retrieval scores."""
    return Hit(chunk=text_chunk(text, **chunk), scores=Scores(dense=dense, fused=fused))  # type: ignore[arg-type]
