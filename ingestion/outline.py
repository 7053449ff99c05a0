"""A PDF's headings and title, read from its type sizes: the section a chunk sits under.

A text layer has no markup, but a heading is set larger than the text around it. PDFium gives each
character a box from its font's ascent and descent (`FPDFText_GetLooseCharBox`), so a line's height
is its type size whatever the page's transformation matrix (some PDFs set every font at size 1 and
scale it). The body size is the size most characters of the document so far are set in; a line at
least HEADING_SCALE times that, short, and with letters in it is a heading. A heading closes every open
heading set no larger than it, so sizes give the nesting ("1 Introduction" › "1.2 Getting started").

What this buys: each chunk is searched together with its document's title and section path (the cheap
form of contextual retrieval: a passage about "the comment period" is found by a question naming the
rule it belongs to), a citation names its section, and a document's structure is known without a
model. Offsets are not kept: chunking finds each heading as a line of the page's final text, which
redaction and footnote cleaning may have shifted.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from core.schemas import PageHeading

HEADING_SCALE = 1.15
MAX_HEADING_CHARS = 100
MAX_HEADING_WORDS = 14
MAX_TITLE_CHARS = 150
TITLE_SIZE_TOLERANCE = 0.1  # the lines of a title set over several lines differ in size by less
_LETTER = re.compile(r"[^\W\d_]")
_LEADER = re.compile(r"(?:\.\s?){3,}|…|\s{3,}\S*\d+$|\.\s+\.?\s*\d+$")
_NOT_A_TITLE = re.compile(r"(?i)^(untitled|binder\d*|microsoft word\b.*)$|\.(pdf|docx?|txt|md|rtf)$")


class TypeSizes:
    """The body size of a document, learned page by page (characters counted per size)."""

    def __init__(self) -> None:
        self._chars: Counter[float] = Counter()

    def add(self, lines: list[tuple[float, str]]) -> None:
        for size, line in lines:
            if size > 0:
                self._chars[size] += len(line)

    @property
    def body(self) -> float:
        return self._chars.most_common(1)[0][0] if self._chars else 0.0


def line_sizes(textpage: Any, raw: str) -> list[tuple[float, str]]:
    """(type size, text) of each non-empty line of PDFium's page text, sized by its first character."""
    import pypdfium2.raw as pdfium_c

    found: list[tuple[float, str]] = []
    start = 0
    box = pdfium_c.FS_RECTF()
    for line in raw.split("\n"):
        text = line.strip("\r\x02\x00 \t")
        if text:
            first = start + len(line) - len(line.lstrip("\r\x02\x00 \t"))
            ok = pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, first, box)
            found.append((round(abs(box.top - box.bottom), 1) if ok else 0.0, text))
        start += len(line) + 1
    return found


def is_heading_line(text: str) -> bool:
    """Short, starting with a letter or a number, mostly letters, not a list item, not a line of a
    table of contents ("2 Simple manipulations . . . . 8"), not a sentence broken off."""
    words = text.split()
    letters = len(_LETTER.findall(text))
    return (
        len(text) <= MAX_HEADING_CHARS
        and len(words) <= MAX_HEADING_WORDS
        and text[:1].isalnum()
        and letters * 2 >= len(text.replace(" ", ""))
        and not _LEADER.search(text)
        and not text.endswith((",", ";", "-"))
    )


def page_headings(lines: list[tuple[float, str]], sizes: TypeSizes) -> list[PageHeading]:
    """The page's heading lines, in order: set larger than the body, short, with letters."""
    sizes.add(lines)
    body = sizes.body
    if body <= 0:
        return []
    return [
        PageHeading(title=" ".join(text.split()), size=size)
        for size, text in lines
        if size >= body * HEADING_SCALE and is_heading_line(text)
    ]


def kept_headings(headings: list[PageHeading], text: str) -> list[PageHeading]:
    """The headings that are lines of the page's final text (a running head blanked from it is not)."""
    lines = {" ".join(line.split()) for line in text.split("\n")}
    return [h for h in headings if h.title in lines]


def usable_title(metadata_title: str | None) -> str:
    """A PDF's metadata title when it names the document (not "Untitled", not a file name)."""
    title = " ".join((metadata_title or "").split())
    return "" if not title or len(title) > MAX_TITLE_CHARS or _NOT_A_TITLE.search(title) else title


class Outline:
    """The heading path as a document's pages are chunked in order, and its title (the metadata
    title, else the largest heading of the first page that has one)."""

    def __init__(self, title: str = "") -> None:
        self.title = title
        self._open: list[PageHeading] = []

    def enter(self, heading: PageHeading) -> None:
        """A heading starts: it closes the open ones set no larger than it."""
        while self._open and self._open[-1].size <= heading.size:
            self._open.pop()
        self._open.append(heading)

    def first_page(self, headings: list[PageHeading]) -> None:
        """The title from a page's headings when none is known yet: the largest, the first of equals
        and the lines of a title set over several lines ("LayoutParser: A Unified Toolkit for Deep" /
        "Learning Based…") joined."""
        if self.title or not headings:
            return
        largest = max(h.size for h in headings)
        first = next(i for i, h in enumerate(headings) if h.size >= largest * (1 - TITLE_SIZE_TOLERANCE))
        parts = [headings[first].title]
        for heading in headings[first + 1 :]:
            if abs(heading.size - largest) > TITLE_SIZE_TOLERANCE * largest or len(" ".join(parts)) > MAX_TITLE_CHARS:
                break
            parts.append(heading.title)
        self.title = " ".join(parts)[:MAX_TITLE_CHARS]

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(h.title for h in self._open)
