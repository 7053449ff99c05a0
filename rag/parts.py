"""The part of a document a request names ("in Appendix B", "the 'Data in packages' section", "in the
preface and in chapter 1"), found by the document's own headings (ingestion/outline.py reads them from
the type sizes at ingest): from its heading's line to where the next heading set about as large starts.

Retrieval is the wrong tool for this: a part's name is written most often in the table of contents,
so a search for "Appendix B (Invoking R)" finds the contents page, and a list drawn from it lists page
numbers. A heading matches when the request names its number ("chapter 1" → "1 Introduction and
preliminaries", "Appendix B" → "Appendix B: Invoking R"), quotes its words ("the 'Using scan directly'
test"), or holds every one of its words ("the part about non-R scripts in packages"; a heading of
one word below the top level only when named as a place: "in the acknowledgments"); the words of the
request that only say what to list ("list every figure") and the document's title name no part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.schemas import Page
from core.text import tokenize

# Words that say which kind of part a heading opens, not which one.
_PART_WORDS = {"appendix", "chapter", "section", "part", "annex", "article", "clause", "schedule", "exhibit"}
_PART_REFERENCE = re.compile(
    r"\b(?:appendix|chapter|section|part|annex|article|clause|schedule|exhibit)\s+"
    r"(\d+(?:\.\d+)*|[A-Z]|[IVXLC]+)(?:['’]s)?\b(?!-)",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"['‘\"“]([^'’\"”]{3,})['’\"”]")
# A word the request names as a place: "in the acknowledgments", "the glossary section"; not a word
# that describes what follows it ("in the pumps handbook").
_PLACE = re.compile(
    r"\b(?:in|from|under|within|inside)\s+the\s+([\w'’-]+)(?=\s*(?:$|[?.!,:;)]|(?:of|and|or|section|part|"
    r"chapter|appendix)\b))|\b([\w'’-]+)\s+(?:section|part|chapter|appendix)\b",
    re.IGNORECASE,
)
# Words of a list request that say what to list, not where ("list every figure", "all the names").
_LISTING = set(
    tokenize(
        "list every all each item items figure figures number numbers date dates year years name names "
        "people person value values mention mentioned give show"
    )
)
# Headings of one level differ in measured size by a few percent (15.3 and 15.4 points).
_SAME_SIZE = 0.05
# A heading's numbering: "1", "1.2.3", "B", "IV", "A.1", with a full stop or colon after it.
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*|[IVXLC]+)$")


@dataclass(frozen=True)
class _Heading:
    page: int
    size: float
    title: str
    nth: int  # how many headings of the same title come before it on its page


@dataclass(frozen=True)
class _Request:
    numbers: set[str]  # "b" of "Appendix B", "1" of "chapter 1"
    quoted: list[str]
    words: set[str]  # its terms (core.text.tokenize), less those that say what to list
    places: set[str]  # the terms it names as a place ("in the acknowledgments")


def part_text(request: str, pages: Iterable[Page], max_pages: int) -> list[Page]:
    """The pages of the parts `request` names (at most `max_pages`), each with the text outside the
    part blanked (its offsets kept for citations). Empty when it names no heading of these pages."""
    pages = list(pages)
    by_number = {page.number: page for page in pages}
    headings = _headings(pages)
    if not headings:
        return []
    title, top = _title_and_top(headings)
    request_ = _Request(
        numbers={found.casefold() for found in _PART_REFERENCE.findall(request)},
        quoted=[q.casefold().strip() for q in _QUOTED.findall(request)],
        words=set(tokenize(request)) - _LISTING,
        places={t for match in _PLACE.finditer(request) for word in match.groups() if word for t in tokenize(word)},
    )
    spans: dict[int, list[tuple[int, int]]] = {}
    for n, heading in enumerate(headings):
        if heading is title or not _names(heading, request_, top):
            continue
        end = next((later for later in headings[n + 1 :] if later.size >= heading.size * (1 - _SAME_SIZE)), None)
        last = min(end.page if end is not None else pages[-1].number, heading.page + max_pages - 1)
        for number in range(heading.page, last + 1):
            text = by_number[number].text if number in by_number else ""
            start = (_line_of(heading, text, 0) or 0) if number == heading.page else 0
            stop = len(text)
            if end is not None and number == end.page:
                found = _line_of(end, text, start + 1 if number == heading.page else 0)
                stop = found if found is not None else len(text)
            if stop > start:
                spans.setdefault(number, []).append((start, stop))
    chosen = sorted(spans)[:max_pages]
    return [_within(by_number[number], spans[number]) for number in chosen if number in by_number]


def _headings(pages: list[Page]) -> list[_Heading]:
    found: list[_Heading] = []
    for page in pages:
        seen: dict[str, int] = {}
        for heading in page.headings:
            title = " ".join(heading.title.split())
            found.append(_Heading(page.number, heading.size, title, seen.get(title, 0)))
            seen[title] = seen.get(title, 0) + 1
    return found


def _title_and_top(headings: list[_Heading]) -> tuple[_Heading, float]:
    """The document's title (the largest heading of the first page with headings) and the size of the
    top level below it (the largest heading of the other pages, or of the rest of a one-page document)."""
    first = [h for h in headings if h.page == headings[0].page]
    title = max(first, key=lambda h: h.size)
    rest = [h.size for h in headings if h.page != title.page] or [h.size for h in headings if h is not title]
    return title, max(rest, default=title.size)


def _names(heading: _Heading, request: _Request, top: float) -> bool:
    """The request names the heading's number, quotes its words, or holds every word of it (a heading of
    one word only at the top level, "the preface", or named as a place, "in the acknowledgments" for
    "1.3 Acknowledgments"; not "6.1 Lists" for "list every figure")."""
    tokens = heading.title.split()
    lead = 1 if tokens and tokens[0].casefold() in _PART_WORDS and len(tokens) > 1 else 0
    first = tokens[lead].rstrip(".:") if len(tokens) > lead else ""
    number = first if _NUMBERING.match(first) else None
    if number is not None and not lead and number.isalpha():
        number = None  # "A Field Guide": a letter is a part's number only after "Appendix", "Part" …
    if number is not None and number.casefold() in request.numbers:
        # "Appendix B Invoking R" or "Chapter 2" alone; not the index's letter "B" under "Appendix D"
        return bool(lead) or len(tokens) > 1
    if any(q in heading.title.casefold() for q in request.quoted):
        return True
    rest = " ".join(tokens[lead + (number is not None) :])
    terms = {t for t in tokenize(rest) if len(t) > 1 and not t[0].isdigit()} - _PART_WORDS
    if not terms or not terms <= request.words:
        return False
    return len(terms) > 1 or heading.size >= top * (1 - _SAME_SIZE) or terms <= request.places


def _line_of(heading: _Heading, text: str, after: int) -> int | None:
    """Where the heading's line starts in its page's text, from `after` on (its nth line of that title
    when the page repeats it); None when it is not found."""
    seen = 0
    for line in re.finditer(r"[^\n]+", text):
        if line.start() < after:
            continue
        if " ".join(line.group().split()).startswith(heading.title):
            if seen == heading.nth:
                return line.start()
            seen += 1
    return None


def _within(page: Page, spans: list[tuple[int, int]]) -> Page:
    """The page with every character outside `spans` blanked (line breaks kept)."""
    keep = [False] * len(page.text)
    for start, stop in spans:
        keep[start:stop] = [True] * (stop - start)
    text = "".join(c if k or c == "\n" else " " for c, k in zip(page.text, keep, strict=True))
    return page.model_copy(update={"text": text})
