"""Lists without the model's memory limits: every date, figure or name of a document, found in its text.

"List every date", "pull out all the figures", "who is mentioned?" are extraction, not writing. A
small model asked to write such a list from a whole document names about a third of the items; the
page texts hold all of them, and patterns find them (no named-entity model ships in any registry
package, and none is downloaded). Each item keeps the passage it was found in, cited to its page, so
the answer reads "- 14 March 1998: “The plant opened on 14 March 1998.” [3]".

- dates: day-month-year in either order with month names (English, French, German, Spanish), numeric
  dates, months with a year, and years from 1900 to 2099 standing alone;
- figures: numbers with a currency, a percent sign or a unit, and other numbers of two or more
  digits (not page or section numbers, not years, which are dates);
- names: runs of capitalised words that do not open a sentence, or of two or more words anywhere,
  less the words every sentence may capitalise ("The", "Section", weekdays, months).

Items are grouped (the same value written alike once), kept in document order, and capped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from core.schemas import Hit
from rag.evidence import sentence_spans

ListKind = Literal["dates", "figures", "names"]

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|"
    "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|"
    "januar|februar|märz|maerz|juni|juli|oktober|dezember|"
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre"
)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th|er)?\.?\s+(?:{_MONTHS})\.?(?:\s+\d{{4}})?"
    rf"|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|(?:{_MONTHS})\.?\s+\d{{4}}"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4}"
    r"|(?:19|20)\d{2}(?:['’]s)?)\b",
    re.IGNORECASE,
)
_UNIT = (
    r"%|percent|per cent|pour cent|prozent|por ciento|€|\$|£|eur|euros?|usd|dollars?|chf|"
    r"[kmgt]?b|bytes?|[kmgt]?hz|mm|cm|km|m|kg|g|tonnes?|tons?|hours?|hrs?|minutes?|mins?|seconds?|secs?|"
    r"days?|weeks?|months?|years?|ans?|jours?|mois|°c|v|w|kw|kwh|ds/m|million|billion|thousand|k"
)
_FIGURE = re.compile(
    rf"(?:[$€£]\s?)?\d+(?:[ ,.\u202f\u00a0]\d{{3}})*(?:[.,]\d+)?(?:\s?(?:{_UNIT})\b|\s?%)?",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-ZÀ-Ý][\w'’.-]*(?:[ -](?:(?:de|du|des|la|le|von|van|der|of|&)\s)?[A-ZÀ-Ý][\w'’.-]*)*")
_COMMON = set(
    """the a an this that these those it its in on at of for to and or but if when where while with by from as
    section chapter part appendix table figure page note see also our we you your they their he she his her
    i my me us monday tuesday wednesday thursday friday saturday sunday le la les un une des du de et en au
    der die das ein eine und el los las una y""".split()
)
_MONTH_WORDS = set(_MONTHS.split("|"))
MAX_ITEMS = 30


@dataclass(frozen=True)
class Item:
    """One value found in a document, the passage it is in, and where."""

    value: str
    passage: Hit


def _dates(text: str) -> Iterable[re.Match[str]]:
    return _DATE.finditer(text)


def _figures(text: str) -> Iterable[re.Match[str]]:
    for found in _FIGURE.finditer(text):
        value = found.group().strip()
        digits = re.sub(r"\D", "", value)
        unit = not value[-1].isdigit() or value[0] in "$€£"
        if re.fullmatch(r"(?:19|20)\d{2}", value) or text[found.end() : found.end() + 1] == ":":
            continue  # a year (a date) or the hour of a time
        if text[max(0, found.start() - 1) : found.start()] == ":":
            continue  # the minutes of a time
        if unit or len(digits) >= 2:
            yield found


def _names(text: str) -> Iterable[re.Match[str]]:
    for found in _NAME.finditer(text):
        words = found.group().split()
        while words and (words[0].lower() in _COMMON or words[0].lower().strip(".") in _MONTH_WORDS):
            words = words[1:]
        if not words or (len(words) > 1 and all(word.isupper() for word in words)):  # a heading in capitals
            continue
        opens_sentence = found.start() == 0 or text[: found.start()].rstrip()[-1:] in {".", "!", "?", ":", "\n", ""}
        if len(words) == 1 and (opens_sentence or len(words[0]) < 3 or (words[0].isupper() and len(words[0]) < 3)):
            continue
        yield found


_FINDERS = {"dates": _dates, "figures": _figures, "names": _names}


def _normal(value: str) -> str:
    return re.sub(r"[\s\u202f\u00a0]+", " ", value.strip(" .,;:")).casefold()


def _sentences(text: str) -> Iterable[tuple[int, int]]:
    """(start, end) of each sentence, a heading in capitals on its own line set apart from the
    sentence that follows it."""
    for span in sentence_spans(text):
        start = span.start
        for line in re.finditer(r"[^\n]+\n", text[span.start : span.end]):
            heading = line.group().strip()
            if heading.isupper() and not heading.endswith((".", ",", ";", ":")):
                yield start, span.start + line.end() - 1
                start = span.start + line.end()
        if text[start : span.end].strip():
            yield start, span.end


# A line of a table of contents or an index: a title, a run of leader dots, a page number. Its numbers
# are page and section numbers, its words every heading of the document: never an item.
_RUNNING_HEAD_WORDS = 12
# A line of a table of contents or an index: a title, leader dots, then a page number or nothing (the
# number on the next line). Its numbers are page and section numbers, its words every heading of the
# document: never an item. Leaders before an amount ("Coffee ...... $3.50") are a price list's.
_LEADERS = re.compile(r"(?:(?:\.\s?){4,}|…|(?:·\s?){4,})\s*(?:\d{1,4}|[ivxlc]{1,6})?\s*$", re.IGNORECASE)


def _running_head(hit: Hit) -> list[tuple[int, int]]:
    """The page's first line when the passage opens a PDF page and the line is its page number alone
    ("92"), or a short title with its page number ("92 Appendix B Invoking R", "Chapter 1: Creating R
    packages 19": most words capitalised): a running head, whose figures are no items."""
    if hit.chunk.char_start != 0 or not hit.chunk.page:
        return []  # a text file's first line is its title
    first = re.match(r"\s*([^\n]*)", hit.chunk.text)
    if first is None:
        return []
    line = first.group(1).strip()
    number = re.fullmatch(r"(\d{1,4})\s+(.+)|(.+?)\s+(\d{1,4})|(\d{1,4})", line)
    if number is None:
        return []
    if number.group(5):
        return [first.span(1)]
    title = [word for word in (number.group(2) or number.group(3)).split() if word[:1].isalpha()]
    capitalised = sum(word[0].isupper() for word in title)
    if len(title) < 2 or len(title) > _RUNNING_HEAD_WORDS or capitalised * 2 < len(title) + 1:
        return []
    return [first.span(1)]


def extract(kind: ListKind, passages: list[Hit]) -> list[Item]:
    """The values of this kind in the passages, once each, in document order, at most MAX_ITEMS; each
    with the sentence it was first found in (a passage pointing at its page and offsets). What a line
    of a table of contents holds is skipped."""
    seen: set[str] = set()
    items: list[Item] = []
    for hit in passages:
        text = hit.chunk.text
        contents = [line.span() for line in re.finditer(r"[^\n]+", text) if _LEADERS.search(line.group())]
        if kind == "figures":
            contents += _running_head(hit)
        for start, end in _sentences(text):
            sentence = text[start:end]
            for found in _FINDERS[kind](sentence):
                at = start + found.start()
                if any(first <= at < last for first, last in contents):
                    continue
                value = found.group().strip(" .,;:")
                key = _normal(value)
                if not key or key in seen:
                    continue
                seen.add(key)
                excerpt = hit.chunk.excerpt(start, end)
                items.append(Item(value=value, passage=Hit(chunk=excerpt, scores=hit.scores)))
                if len(items) >= MAX_ITEMS:
                    return items
    return items


def item_list(items: list[Item]) -> tuple[str, list[Hit]]:
    """The answer (a bullet per item: its value, then its sentence quoted, cited) and its numbered
    passages: items found in the same sentence share its number."""
    passages: list[Hit] = []
    numbers: dict[str, int] = {}
    lines: list[str] = []
    for item in items:
        key = item.passage.chunk.chunk_id + f":{item.passage.chunk.char_start}"
        if key not in numbers:
            passages.append(item.passage)
            numbers[key] = len(passages)
        sentence = " ".join(item.passage.chunk.text.split())
        lines.append(f"- {item.value}: “{sentence}” [{numbers[key]}]")
    return "\n".join(lines), passages
