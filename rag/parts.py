"""The part of a document a request names ("in Appendix B", "the 'Data in packages' section", "in the
preface and in chapter 1"), found by the document's own headings (ingestion/outline.py reads them from
the type sizes at ingest): the pages from its heading to the next heading set at least as large.

Retrieval is the wrong tool for this: a part's name is written most often in the table of contents,
so a search for "Appendix B (Invoking R)" finds the contents page, and a list drawn from it lists page
numbers. A heading matches when the request names its number ("chapter 1" → "1 Introduction and
preliminaries", "Appendix B" → "Appendix B Invoking R"), quotes its words ("the 'Using scan directly'
test"), or holds every one of its words ("in the acknowledgments", "the part about non-R scripts in
packages").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.schemas import Page
from core.text import tokenize

# Words that say which kind of part a heading opens, not which one.
_PART_WORDS = {"appendix", "chapter", "section", "part", "annex"}
_PART_REFERENCE = re.compile(
    r"\b(?:appendix|chapter|section|part|annex)\s+(\d+(?:\.\d+)*|[A-Z]|[IVXLC]+)\b(?![-'’])", re.IGNORECASE
)
_QUOTED = re.compile(r"['‘\"“]([^'’\"”]{3,})['’\"”]")
# Headings of one level differ in measured size by a few percent (15.3 and 15.4 points).
_SAME_SIZE = 0.05
# A heading's numbering: "1", "1.2.3", "B", "IV", "A.1".
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*|[IVXLC]+)\.?$")


@dataclass(frozen=True)
class _Heading:
    page: int
    size: float
    title: str


def part_text(request: str, pages: Iterable[Page], max_pages: int) -> list[Page]:
    """The pages of the parts `request` names (at most `max_pages`), each with the text outside the
    part blanked (its offsets kept for citations): a part starts at its heading's line and ends where
    the next heading set as large starts. Empty when it names no heading of these pages. A heading of
    one word is named by it only at the top level ("the preface", not "6.1 Lists" for "List every …")."""
    pages = list(pages)
    by_number = {page.number: page for page in pages}
    headings = [_Heading(page.number, h.size, h.title.strip()) for page in pages for h in page.headings]
    top = max((h.size for h in headings if h.page > headings[0].page), default=0.0) if headings else 0.0
    request_ = _Request(
        numbers={found.casefold() for found in _PART_REFERENCE.findall(request)},
        quoted=[q.casefold().strip() for q in _QUOTED.findall(request)],
        words=set(tokenize(request)),
    )
    spans: dict[int, list[tuple[int, int]]] = {}
    for n, heading in enumerate(headings):
        if not _names(heading, request_, top):
            continue
        end = next((later for later in headings[n + 1 :] if later.size >= heading.size), None)
        last = min(end.page if end is not None else pages[-1].number, heading.page + max_pages - 1)
        for number in range(heading.page, last + 1):
            text = by_number[number].text if number in by_number else ""
            start = _line_of(heading, text) if number == heading.page else 0
            stop = _line_of(end, text) if end is not None and number == end.page else len(text)
            if stop > start:
                spans.setdefault(number, []).append((start, stop))
    chosen = sorted(spans)[:max_pages]
    return [_within(by_number[number], spans[number]) for number in chosen if number in by_number]


def _line_of(heading: _Heading, text: str) -> int:
    """Where the heading's line starts in its page's text (the page's start when it is not found)."""
    found = text.find(heading.title)
    return max(found, 0)


def _within(page: Page, spans: list[tuple[int, int]]) -> Page:
    """The page with every character outside `spans` blanked (line breaks kept)."""
    keep = [False] * len(page.text)
    for start, stop in spans:
        keep[start:stop] = [True] * (stop - start)
    text = "".join(c if k or c == "\n" else " " for c, k in zip(page.text, keep, strict=True))
    return page.model_copy(update={"text": text})


@dataclass(frozen=True)
class _Request:
    numbers: set[str]  # "b" of "Appendix B", "1" of "chapter 1"
    quoted: list[str]
    words: set[str]  # its terms (core.text.tokenize)


def _names(heading: _Heading, request: _Request, top: float) -> bool:
    """The request names the heading's number, quotes its words, or holds every word of it."""
    tokens = heading.title.split()
    lead = 1 if tokens and tokens[0].casefold() in _PART_WORDS and len(tokens) > 1 else 0
    number = tokens[lead].rstrip(".:") if len(tokens) > lead and _NUMBERING.match(tokens[lead]) else None
    if number is not None and not lead and number.isalpha():
        number = None  # "A Field Guide": a letter is a part's number only after "Appendix", "Part" …
    titled = len(tokens) > lead + (number is not None)  # a lone "B" heads an index's letter, not a part
    if number is not None and titled and number.casefold() in request.numbers:
        return True
    if any(q in heading.title.casefold() for q in request.quoted):
        return True
    rest = " ".join(tokens[lead + (number is not None) :])
    terms = {t for t in tokenize(rest) if len(t) > 1 and not t[0].isdigit()} - _PART_WORDS
    return bool(terms) and terms <= request.words and (len(terms) > 1 or heading.size >= top * (1 - _SAME_SIZE))
