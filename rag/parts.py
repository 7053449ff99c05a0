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


def part_pages(request: str, pages: Iterable[Page], max_pages: int) -> set[int]:
    """The page numbers of the parts `request` names, at most `max_pages` of them; empty when it names
    no heading of these pages. A heading of one word is named by it only at the top level ("the
    preface", not "6.1 Lists" for "List every …")."""
    pages = list(pages)
    last_page = max((page.number for page in pages), default=0)
    headings = [_Heading(page.number, h.size, h.title.strip()) for page in pages for h in page.headings]
    top = max((h.size for h in headings if h.page > headings[0].page), default=0.0) if headings else 0.0
    request_ = _Request(
        numbers={found.casefold() for found in _PART_REFERENCE.findall(request)},
        quoted=[q.casefold().strip() for q in _QUOTED.findall(request)],
        words=set(tokenize(request)),
    )
    chosen: set[int] = set()
    for n, heading in enumerate(headings):
        if not _names(heading, request_, top):
            continue
        end = next((later.page for later in headings[n + 1 :] if later.size >= heading.size), None)
        last = end if end is not None else last_page
        chosen.update(range(heading.page, min(last, heading.page + max_pages - 1) + 1))
    return set(sorted(chosen)[:max_pages])


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
