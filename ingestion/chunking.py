"""Sentence-aware chunks that never cross a page, with exact character offsets into their page's
text and, for Markdown, the heading path they sit under.

LlamaIndex's SentenceSplitter does the splitting (sizes in its default tokenizer's tokens; 200
tokens stay inside MiniLM's 256-token window). Its chunks are substrings of the input, so offsets
are recovered by searching forward from the previous chunk.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from ragchat.schemas import Chunk, Document

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Section:
    """A span of a page's text and the heading path it belongs to."""

    start: int
    text: str
    heading_path: tuple[str, ...] = ()


@lru_cache(maxsize=4)
def _splitter(chunk_size: int, chunk_overlap: int):
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)


def markdown_sections(text: str) -> list[Section]:
    """Split Markdown at ATX headings (not inside fenced code), tracking the heading path."""
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    in_fence = False
    start = 0
    offset = 0
    current: tuple[str, ...] = ()
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line.rstrip("\r\n"))
        if match:
            if text[start:offset].strip():
                sections.append(Section(start, text[start:offset], current))
            level, title = len(match.group(1)), match.group(2).strip()
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
            current = tuple(t for _, t in path)
            start = offset
        offset += len(line)
    if text[start:].strip():
        sections.append(Section(start, text[start:], current))
    return sections


def locate(haystack: str, needle: str, start: int) -> int:
    """Offset of needle in haystack at or after start; whitespace-tolerant as a fallback."""
    found = haystack.find(needle, start)
    if found < 0:
        found = haystack.find(needle)
    if found >= 0:
        return found
    pattern = r"\s+".join(re.escape(word) for word in needle.split())
    match = re.compile(pattern).search(haystack, start) or re.compile(pattern).search(haystack)
    return match.start() if match else start


def chunk_id_for(doc_id: str, content_hash: str, page: int, start: int, text: str) -> str:
    key = f"{doc_id}:{content_hash}:{page}:{start}:{text}".encode()
    return hashlib.sha256(key).hexdigest()[:24]


def chunk_document(document: Document, chunk_size: int, chunk_overlap: int) -> list[Chunk]:
    splitter = _splitter(chunk_size, chunk_overlap)
    chunks: list[Chunk] = []
    for page in document.pages:
        sections = markdown_sections(page.text) if document.file_type == "md" else [Section(0, page.text)]
        for section in sections:
            cursor = 0
            for piece in splitter.split_text(section.text):
                if not piece.strip():
                    continue
                local = locate(section.text, piece, cursor)
                cursor = local + 1
                start = section.start + local
                end = start + len(piece)
                chunks.append(
                    Chunk(
                        chunk_id=chunk_id_for(document.doc_id, document.content_hash, page.number, start, piece),
                        doc_id=document.doc_id,
                        content_hash=document.content_hash,
                        source=document.source,
                        file_type=document.file_type,
                        page=page.number,
                        chunk_index=len(chunks),
                        text=piece,
                        char_start=start,
                        char_end=end,
                        heading_path=list(section.heading_path),
                    )
                )
    return chunks
