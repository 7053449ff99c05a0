"""Pages set in columns, read column by column.

Many PDFs (the Federal Register, tax instructions, two-column papers) store their text line by line
across the whole page, so PDFium's text and pdfplumber's run the columns together: "This regulation is
within the scope of The FAA must receive comments on this Before further flight, revise the existing".
A search then misses the sentence and a model reads nonsense.

The page's characters and their boxes are cut into runs: a run ends at a line break or where the next
character is GUTTER_PT or more away. A gutter is a vertical band at least GUTTER_PT wide that almost no
run crosses (a title or a rule across the columns may) with a column of prose on each side: several
lines, a fifth of the text's width, mostly letters (a table's figures are not prose, so a table's
columns are never read one after the other). Runs that cross a gutter (a title, a footnote across the
page) divide the page into bands read top to bottom; in a band each column is read top to bottom,
left to right. A page without a gutter keeps its text as PDFium gives it: only pages in columns change.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Any

GUTTER_PT = 8.0  # the narrowest gap between two columns, in points
MIN_COLUMN_SHARE = 0.2  # a column spans at least this share of the text's width
MIN_COLUMN_LINES = 3  # and holds at least this many lines
MIN_LETTER_SHARE = 0.5  # and is mostly letters (prose, not a table's figures)
CROSSING_SHARE = 0.05  # at most this share of the runs may cross a gutter (titles, page-wide lines)
MIN_CROSSING = 2  # or this many, on a page of few runs (a title and a footnote)
STACK_WIDTH = 2.0  # a run of letters one above the other is at most this many characters wide
TURNED_RATIO = 2.0  # a run this many times taller than wide is set up or down the page
MIN_WORDS_PER_LINE = 3.0  # a column of prose holds at least this many words a line on average
MAX_WIDTH_PT = 5000.0  # text spread wider than this (a broken font matrix) is left as it is
STEP_CHECK = 97  # every this many characters, PDFium's text is checked against its characters
SOFT_HYPHEN = 0x02  # PDFium's code for a hyphen at a line's end; its text gives it as U+FFFE

Box = tuple[float, float, float, float]  # left, bottom, right, top in PDF points (origin bottom left)


@dataclass(frozen=True)
class Run:
    """Characters of one line with no gap of GUTTER_PT between them, and their box."""

    left: float
    bottom: float
    right: float
    top: float
    text: str

    @property
    def middle(self) -> tuple[float, float]:
        return (self.left + self.right) / 2, (self.bottom + self.top) / 2


def page_runs(textpage: Any, text: str) -> list[Run]:
    """The runs of a PDFium text page whose text (`get_text_range`) is `text`, in PDFium's order."""
    import pypdfium2.raw as pdfium_c

    count = textpage.count_chars()
    if count != len(text) or not _in_step(textpage, text):  # characters and text out of step: as it is
        return []
    left, right, bottom, top = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    runs: list[Run] = []
    start = 0
    box: Box | None = None
    for index, char in enumerate(text):
        if char in "\r\n":
            if box is not None:
                runs.append(Run(*box, text[start:index]))
            start, box = index + 1, None
            continue
        if char.isspace() or not pdfium_c.FPDFText_GetCharBox(textpage.raw, index, left, right, bottom, top):
            continue
        glyph: Box = (left.value, bottom.value, right.value, top.value)
        if (
            box is not None
            and not _stacked(box, glyph)
            and (
                left.value - box[2] >= GUTTER_PT  # across a gutter
                or left.value < box[0] - GUTTER_PT  # back to the left: another line
                or top.value < box[1]  # wholly below the run: another line with no line break
                or bottom.value > box[3]
            )
        ):
            runs.append(Run(*box, text[start:index]))
            box = None
        if box is None:
            box, start = glyph, index
        else:
            box = (min(box[0], glyph[0]), min(box[1], glyph[1]), max(box[2], glyph[2]), max(box[3], glyph[3]))
    if box is not None:
        runs.append(Run(*box, text[start:]))
    finite = [run for run in runs if all(math.isfinite(v) for v in (run.left, run.bottom, run.right, run.top))]
    return [run for run in finite if run.text.strip()]


def _stacked(box: Box, char: Box) -> bool:
    """Whether a character goes on a run set up or down the page (a margin stamp whose letters PDFium
    gives one above the other): the run is one character wide, the character's middle is over it and
    it starts within a character's height above or below it."""
    width, height = char[2] - char[0], char[3] - char[1]
    narrow = box[2] - box[0] <= STACK_WIDTH * max(width, height)
    over = box[0] <= (char[0] + char[2]) / 2 <= box[2]
    gap = max(char[1] - box[3], box[1] - char[3])
    return narrow and over and -height / 2 <= gap <= max(width, height)


def _in_step(textpage: Any, text: str) -> bool:
    """Whether PDFium's characters and its text line up, checked on a sample of characters (its text
    may drop or add characters: then every run's text would be shifted)."""
    import pypdfium2.raw as pdfium_c

    for index in range(0, len(text), STEP_CHECK):
        if text[index] in "\r\n":
            continue
        code = pdfium_c.FPDFText_GetUnicode(textpage.raw, index)
        if code != ord(text[index]) and not (code == SOFT_HYPHEN and text[index] == "\ufffe"):
            return False
    return True


def column_text(runs: list[Run], outside: list[Box] | None = None) -> str | None:
    """The page's text read column by column (runs of one line joined by a space, lines by a newline),
    or None when the page is not set in columns. Runs whose middle is inside one of `outside` (a
    table written out on its own) are left out."""
    runs = [run for run in runs if not any(_inside(run.middle, box) for box in outside or [])]
    heights = sorted(run.top - run.bottom for run in runs)
    line_height = heights[len(heights) // 2] if heights else 0.0
    turned: list[Run] = []
    upright: list[Run] = []
    for run in runs:
        (turned if _turned(run, line_height) else upright).append(run)
    gutters = _gutters(upright)
    if not gutters:
        return None
    lines: list[str] = []
    band: list[Run] = []
    for line in _line_groups(upright):
        crossing = [run for run in line if any(run.left < start and run.right > end for start, end in gutters)]
        if crossing:
            lines += _band_lines(band, gutters)
            band = []
            lines.append(" ".join(run.text.strip() for run in line))
        else:
            band += line
    lines += _band_lines(band, gutters)
    lines += [run.text.strip() for run in turned]  # a stamp up the margin, after the page
    return "\n".join(line for line in lines if line)


def _turned(run: Run, line_height: float) -> bool:
    """Text set up or down the page (a margin stamp): taller than wide, and than two lines."""
    height = run.top - run.bottom
    return height > TURNED_RATIO * (run.right - run.left) and height > 2 * line_height


def _gutters(runs: list[Run]) -> list[tuple[float, float]]:
    """The page's gutters, left to right: bands almost no run crosses, with prose on both sides."""
    if len(runs) < 2 * MIN_COLUMN_LINES:
        return []
    left_edge = min(run.left for run in runs)
    width = max(run.right for run in runs) - left_edge
    if not 4 * GUTTER_PT <= width <= MAX_WIDTH_PT:  # too narrow for columns, or text far off any page
        return []
    cells = int(width) + 1
    cover = [0] * (cells + 1)
    for run in runs:  # how many runs cover each point across the page (a difference array)
        cover[int(run.left - left_edge)] += 1
        cover[int(run.right - left_edge) + 1] -= 1
    allowed = max(MIN_CROSSING, int(CROSSING_SHARE * len(runs)))
    gutters: list[tuple[float, float]] = []
    depth, opened = 0, None
    for cell in range(cells):
        depth += cover[cell]
        if depth <= allowed and opened is None:
            opened = cell
        elif depth > allowed and opened is not None:
            start, end = left_edge + opened, left_edge + cell
            if end - start >= GUTTER_PT and _prose_on_both_sides(runs, start, end, width):
                gutters.append((start, end))
            opened = None
    return gutters


def _prose_on_both_sides(runs: list[Run], start: float, end: float, width: float) -> bool:
    left = [run for run in runs if run.right <= start]
    right = [run for run in runs if run.left >= end]
    return _is_column(left, width) and _is_column(right, width)


def _is_column(runs: list[Run], width: float) -> bool:
    if not runs or max(r.right for r in runs) - min(r.left for r in runs) < MIN_COLUMN_SHARE * width:
        return False
    lines = _line_groups(runs)
    if len(lines) < MIN_COLUMN_LINES:
        return False
    words = sum(len(r.text.split()) for r in runs)
    if words < MIN_WORDS_PER_LINE * len(lines):  # a form's labels or a list of names, not running prose
        return False
    text = "".join(r.text for r in runs).replace(" ", "")
    return sum(ch.isalpha() for ch in text) >= MIN_LETTER_SHARE * len(text)


def _band_lines(band: list[Run], gutters: list[tuple[float, float]]) -> list[str]:
    """A band's lines, column after column."""
    columns: list[list[Run]] = [[] for _ in range(len(gutters) + 1)]
    for run in band:
        columns[sum(run.middle[0] >= (start + end) / 2 for start, end in gutters)].append(run)
    return [" ".join(r.text.strip() for r in line) for column in columns for line in _line_groups(column)]


def _line_groups(runs: list[Run]) -> list[list[Run]]:
    """Runs grouped into lines (a run whose top is above the line's middle joins it), top to bottom,
    each left to right."""
    lines: list[list[Run]] = []
    middle = 0.0
    for run in sorted(runs, key=lambda r: -r.top):
        if lines and run.top > middle:
            lines[-1].append(run)
        else:
            lines.append([run])
            middle = run.middle[1]
    return [sorted(line, key=lambda r: r.left) for line in lines]


def _inside(point: tuple[float, float], box: Box) -> bool:
    left, bottom, right, top = box
    return left <= point[0] <= right and bottom <= point[1] <= top
