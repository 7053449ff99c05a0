"""Running heads and feet: the lines a PDF prints in the margin of every page (a journal's print slug,
"Federal Register / Vol. 85 / ... 47699", "Page 3 of 40"). In a chunk they state nothing, match no
question, and take a share of the chunk's embedding and of the model's evidence budget.

They are learnt before the document streams, from a sample of pages spread through it (PDFium's text
only: milliseconds a page, so a 2,000-page manual starts indexing as early as before). A line is
running when, among the first or last `margin` lines of at least `share` of the sampled pages (and
of three), it is the same line except for its numbers, and each of its numbers is either the same
on every page or the page number plus a constant (one in five may not). That is what a print
template does; a table whose first row on each page is a date, or a batch of invoices whose first
line is "Invoice 4471, total 300.00", changes its numbers some other way and is kept; so is a daily
log's "2024-03-05" (a number of a numeric date never counts the pages). Table rows
(cells joined by " | ") are never running: a table's header repeated on each page gives its rows
their meaning.

A running line is blanked, not cut: its characters become spaces, so every character offset into the
stored page text still points at PDFium's character on the page, which the page highlight relies on
(ingestion/page_image.py, `keeps_offsets`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

_NUMBER = re.compile(r"\d+")
_LETTER = re.compile(r"[^\W\d_]")
_DATE = re.compile(r"#[-/.]#[-/.]#")
_TABLE_ROW = " | "
MIN_PAGES = 3

# Each number of a running line: ("same", value) on every page, or ("page", offset): page index + offset.
NumberRule = tuple[str, int]


@dataclass(frozen=True)
class RunningLineRule:
    """How running lines are found: the lines at each end of a page looked at, the share of sampled
    pages a line must be on, and how many pages are sampled."""

    margin: int
    share: float
    sample: int


@dataclass(frozen=True)
class RunningLines:
    """The running lines a document's sampled pages showed: each line's key and its numbers' rules."""

    margin: int = 0
    patterns: dict[str, tuple[NumberRule, ...]] = field(default_factory=dict)

    def blank(self, text: str, page_index: int) -> str:
        """`text` (the page at 0-based `page_index`) with its running lines replaced by spaces."""
        if not self.patterns:
            return text
        blanked = list(text)
        for start, end in _margin_lines(text, self.margin):
            line = text[start:end]
            pattern = self.patterns.get(line_key(line))
            if pattern is not None and _fits(pattern, page_index, _numbers(line)):
                blanked[start:end] = " " * (end - start)
        return "".join(blanked)


def line_key(line: str) -> str:
    """A line as compared across pages: numbers as '#', without spaces (pdfplumber and PDFium space a
    line differently), case folded."""
    return "".join(_NUMBER.sub("#", line).split()).casefold()


def sample_indexes(page_count: int, sample: int) -> list[int]:
    """`sample` page indexes spread evenly from the first page to the last."""
    if page_count <= sample:
        return list(range(page_count))
    return sorted({round(i * (page_count - 1) / (sample - 1)) for i in range(sample)})


def learn_running_lines(sampled: dict[int, str], rule: RunningLineRule) -> RunningLines:
    """The running lines of the sampled pages (0-based page index → text)."""
    pages = {index: text for index, text in sampled.items() if text.strip()}
    needed = max(MIN_PAGES, math.ceil(rule.share * len(pages)))
    if rule.margin <= 0 or len(pages) < needed:
        return RunningLines()
    seen: dict[str, dict[int, list[int]]] = {}
    for index, text in pages.items():
        for start, end in _margin_lines(text, rule.margin):
            line = text[start:end]
            seen.setdefault(line_key(line), {})[index] = _numbers(line)
    patterns: dict[str, tuple[NumberRule, ...]] = {}
    for key, numbers in seen.items():
        if not key or len(numbers) < needed:
            continue
        pattern = _pattern(key, numbers)
        if not _LETTER.search(key) and not any(kind == "page" for kind, _ in pattern):
            continue  # a line of bare numbers is running only when it counts the pages
        if sum(_fits(pattern, index, found) for index, found in numbers.items()) >= needed:
            patterns[key] = pattern
    return RunningLines(rule.margin, patterns)


def keeps_offsets(stored: str, original: str) -> bool:
    """True when `stored` is `original` with some characters blanked: its offsets are the original's."""
    return len(stored) == len(original) and all(a == b or a == " " for a, b in zip(stored, original, strict=True))


def _pattern(key: str, numbers: dict[int, list[int]]) -> tuple[NumberRule, ...]:
    """Each number position's most common rule over the pages: one value, or page index + one offset.
    A number of a date (2024-03-05, 03/05/2024) is never the page's: a daily log's dates are content."""
    dated = _date_positions(key)
    rules: list[NumberRule] = []
    for position in range(len(next(iter(numbers.values())))):
        same = Counter(found[position] for found in numbers.values()).most_common(1)[0]
        paged = Counter(found[position] - index for index, found in numbers.items()).most_common(1)[0]
        rules.append(("page", paged[0]) if paged[1] > same[1] and position not in dated else ("same", same[0]))
    return tuple(rules)


def _date_positions(key: str) -> set[int]:
    """The positions (among the key's numbers) of the numbers that make up a numeric date."""
    starts = [match.start() for match in re.finditer("#", key)]
    dated: set[int] = set()
    for date in _DATE.finditer(key):
        dated.update(n for n, start in enumerate(starts) if date.start() <= start < date.end())
    return dated


def _fits(pattern: tuple[NumberRule, ...], page_index: int, numbers: list[int]) -> bool:
    """The numbers follow the pattern; one in five may not (a print slug's format code changes on a
    page of figures), so a line of fewer than five numbers must follow it exactly."""
    if len(pattern) != len(numbers):
        return False
    misses = sum(
        number != (value + page_index if kind == "page" else value)
        for (kind, value), number in zip(pattern, numbers, strict=True)
    )
    return misses <= len(numbers) // 5


def _numbers(line: str) -> list[int]:
    return [int(number) for number in _NUMBER.findall(line)]


def _margin_lines(text: str, margin: int) -> list[tuple[int, int]]:
    """(start, end) of the first and last `margin` non-empty lines, table rows left out."""
    lines: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        if line.strip():
            lines.append((offset, offset + len(line)))
        offset += len(line) + 1
    ends = lines if len(lines) <= 2 * margin else lines[:margin] + lines[-margin:]
    return [(start, end) for start, end in ends if _TABLE_ROW not in text[start:end]]
