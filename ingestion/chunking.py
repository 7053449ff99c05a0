"""Sentence-aware chunks that never cross a page, with exact character offsets into their page's
text and, for Markdown, the heading path they sit under.

LlamaIndex's SentenceSplitter does the splitting (sizes in its default tokenizer's tokens; 200
tokens stay inside MiniLM's 256-token window). Its chunks are substrings of the input, so offsets
are recovered by searching forward from the previous chunk.

Markdown is split at ATX and setext headings first. A fenced code block (``` or ~~~) is one chunk,
verbatim from fence to fence and marked `kind="code"`, however long it is: splitting it would cut a
function in half. Text is fed to the splitter in blocks of at most BLOCK_CHARS, cut at paragraph or
line breaks (or anywhere, for one huge line), so a 50 MB single-line file costs linear time.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from core.language import LanguageDetector
from core.schemas import Chunk, ChunkKind, Document, FileType, Page, PageHeading
from ingestion.outline import Outline

if TYPE_CHECKING:
    from llama_index.core.node_parser import SentenceSplitter

# Bumped when the rules change what chunks a document gets; recorded in the index manifest.
CHUNKER_VERSION = 3
BLOCK_CHARS = 20_000

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*(?:[ \t]#+[ \t]*)?$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    """A span of a page's text and the heading path it belongs to."""

    start: int
    text: str
    heading_path: tuple[str, ...] = ()
    kind: ChunkKind = "text"


@lru_cache(maxsize=4)
def _splitter(chunk_size: int, chunk_overlap: int) -> SentenceSplitter:
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)


def markdown_sections(text: str) -> list[Section]:
    """Split Markdown at headings (never inside fenced code), tracking the heading path; each fenced
    code block is a section of its own with kind "code"."""
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current: tuple[str, ...] = ()
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    start = body = 0  # start of the open prose section, and of its text after the heading line(s)

    def close_prose(end: int) -> None:
        # A heading with nothing under it before a code block or the next heading is not a chunk of
        # its own: its title is in the heading path of what follows.
        if text[body:end].strip():
            sections.append(Section(start, text[start:end], current))

    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r\n")
        fence = _FENCE.match(line)
        if fence:
            close_prose(offsets[i])
            marker = fence.group(1)
            j = i + 1
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
            while j < len(lines) and not closing.match(lines[j].rstrip("\r\n")):
                j += 1
            end = offsets[min(j + 1, len(lines))]
            block = text[offsets[i] : end].rstrip("\r\n")
            sections.append(Section(offsets[i], block, current, "code"))
            start = body = end
            i = j + 1
            continue
        heading = _HEADING.match(line)
        level, title = (len(heading.group(1)), heading.group(2).strip()) if heading else (0, "")
        heading_lines = 1
        if not heading and i + 1 < len(lines) and line.strip() and _SETEXT.match(lines[i + 1].rstrip("\r\n")):
            previous_blank = i == 0 or not lines[i - 1].strip()
            if previous_blank:
                level, title = (1 if lines[i + 1].strip().startswith("=") else 2), line.strip()
                heading_lines = 2
        if level:
            close_prose(offsets[i])
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
            current = tuple(t for _, t in path)
            start, body = offsets[i], offsets[min(i + heading_lines, len(lines))]
        i += heading_lines
    close_prose(len(text))
    return sections


def outlined_sections(page: Page, outline: Outline) -> list[Section]:
    """A PDF page cut at its heading lines (ingestion/outline.py), each part under the heading path
    open where it starts; the part before the page's first heading goes on under the last page's."""
    outline.first_page(page.headings)
    starts: list[tuple[int, PageHeading]] = []
    cursor = 0
    for heading in page.headings:
        found = _line_at(page.text, heading.title, cursor)
        if found is not None:
            starts.append((found, heading))
            cursor = found + 1
    sections: list[Section] = []
    previous = 0
    for start, heading in starts:
        if page.text[previous:start].strip():
            sections.append(Section(previous, page.text[previous:start], outline.path))
        outline.enter(heading)
        previous = start
    if page.text[previous:].strip():
        sections.append(Section(previous, page.text[previous:], outline.path))
    return sections


def _line_at(text: str, title: str, start: int) -> int | None:
    """Where a line holding just `title` (whatever its spacing) begins, at or after `start`."""
    pattern = r"\s+".join(re.escape(word) for word in title.split())
    found = re.compile(rf"(?m)^[ \t]*{pattern}[ \t]*$").search(text, start)
    return found.start() if found else None


def blocks(text: str, limit: int = BLOCK_CHARS) -> Iterable[tuple[int, str]]:
    """(offset, piece) pieces of at most `limit` characters, cut at a blank line, else a line break,
    else a space, else anywhere."""
    start = 0
    while len(text) - start > limit:
        window = text[start : start + limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
        cut = cut + 1 if cut > limit // 4 else limit
        yield start, text[start : start + cut]
        start += cut
    if start < len(text):
        yield start, text[start:]


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


@dataclass(frozen=True)
class ChunkSource:
    """Who the chunks of a page belong to."""

    doc_id: str
    content_hash: str
    source: str
    file_type: FileType


def chunk_page(
    owner: ChunkSource,
    page: Page,
    chunk_size: int,
    chunk_overlap: int,
    first_index: int = 0,
    detector: LanguageDetector | None = None,
    outline: Outline | None = None,
) -> list[Chunk]:
    """The chunks of one page; chunk_index continues from first_index across a document. Each chunk
    carries its language (`detector`'s, the default one's when None); a chunk too short to tell
    (a heading, a row of figures) takes its page's. `outline` follows a PDF's headings from page to
    page (pages in order): each chunk gets its section path and the document's title."""
    splitter = _splitter(chunk_size, chunk_overlap)
    detect = detector or _default_detector()
    # Detected only when a chunk is too short to tell (most pages never are), then once.
    page_lang = cache(lambda: detect(page.text))

    if owner.file_type == "md":
        sections = markdown_sections(page.text)
    elif outline is not None:
        sections = outlined_sections(page, outline)
    else:
        sections = [Section(0, page.text)]
    title = outline.title if outline is not None else ""
    chunks: list[Chunk] = []

    text_file = owner.file_type != "pdf"

    def add(start: int, piece: str, section: Section) -> None:
        first_line = page.text.count("\n", 0, start) + 1 if text_file else None
        chunks.append(
            Chunk(
                chunk_id=chunk_id_for(owner.doc_id, owner.content_hash, page.number, start, piece),
                doc_id=owner.doc_id,
                content_hash=owner.content_hash,
                source=owner.source,
                file_type=owner.file_type,
                page=page.number,
                chunk_index=first_index + len(chunks),
                text=piece,
                char_start=start,
                char_end=start + len(piece),
                heading_path=list(section.heading_path),
                title=title,
                kind=section.kind,
                line_start=first_line,
                line_end=None if first_line is None else first_line + piece.rstrip("\n").count("\n"),
                lang=detect(piece, fallback=page_lang),
            )
        )

    for section in sections:
        if section.kind == "code":
            add(section.start, section.text, section)
            continue
        for block_start, block in blocks(section.text):
            cursor = 0
            for piece in splitter.split_text(block):
                if not piece.strip():
                    continue
                local = locate(block, piece, cursor)
                cursor = local + 1
                add(section.start + block_start + local, piece, section)
    return chunks


@lru_cache(maxsize=1)
def _default_detector() -> LanguageDetector:
    return LanguageDetector()


def chunk_document(document: Document, chunk_size: int, chunk_overlap: int, title: str = "") -> list[Chunk]:
    owner = ChunkSource(document.doc_id, document.content_hash, document.source, document.file_type)
    outline = Outline(title) if document.file_type == "pdf" else None
    chunks: list[Chunk] = []
    for page in document.pages:
        chunks.extend(chunk_page(owner, page, chunk_size, chunk_overlap, len(chunks), outline=outline))
    return chunks
