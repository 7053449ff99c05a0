"""A ruled table as lines of text that a search and a small model can read row by row.

Each data row names its columns: "Company: Twitter, Inc. | City: San Francisco | No. Of: 240". A row
of bare cells ("Twitter, Inc. | San Francisco | 240") matches a question that names a column ("which
city…", "how many employees…") by nothing but the value, and a model reading it cannot tell which
number is which; with its header, each row states what it holds. A table that goes on over several
pages repeats no header on the later ones: the last header seen, when the column count is the same,
labels them. The header row itself stays as a line of its own, as printed.

Cells whose characters pdfplumber spaced out ("0 3 / 2 5 / 2 0 16", a kerned date) are joined back
("03/25/2016"). Removing the labels after each " | " gives back the bare cells, which is how the
evaluation still matches gold passages written before (eval/metrics.py).
"""

from __future__ import annotations

import re

CELL_SEPARATOR = " | "
LABEL_SEPARATOR = ": "
# A spaced-out cell: only one- or two-character tokens, at least this many of them.
SPACED_MIN_TOKENS = 5
MAX_LABEL_CHARS = 40
HEADER_MIN_CELLS = 3
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")
_FIGURE = re.compile(r"^\s*[-–−(+$€£]*\s*\d[\d.,\s]*[%)]?\s*$")  # 18,870 · (1.5) · −12 % · $ 3.40


def clean_cell(cell: str | None) -> str:
    """A cell's text on one line, its spaced-out characters joined back."""
    text = " ".join((cell or "").split())
    tokens = text.split(" ")
    if len(tokens) >= SPACED_MIN_TOKENS and all(len(token) <= 2 for token in tokens):
        return "".join(tokens)
    return text


def is_header(cells: list[str]) -> bool:
    """A row of column names: at least HEADER_MIN_CELLS named cells, most of them words, none mostly
    digits. A two-column table is most often a list of names and values ("Deposit | 1,200"), whose
    first row is data: it is left as it is printed."""
    named = [cell for cell in cells if cell]
    if len(named) < HEADER_MIN_CELLS:
        return False
    wordy = [cell for cell in named if _LETTER.search(cell) and len(cell) <= MAX_LABEL_CHARS]
    numeric = [cell for cell in named if len(_DIGIT.findall(cell)) * 2 > len(cell)]
    return not numeric and len(wordy) * 4 >= len(named) * 3


def labelled_row(cells: list[str], header: list[str] | None) -> str:
    """The row's cells joined by " | ", each non-empty cell after its column's name when known."""
    if header is None or len(header) != len(cells):
        return CELL_SEPARATOR.join(cells)
    return CELL_SEPARATOR.join(
        f"{name}{LABEL_SEPARATOR}{cell}" if cell and name else cell for name, cell in zip(header, cells, strict=True)
    )


def is_labelled_row(line: str) -> bool:
    """A row written by `labelled_row` with its header: most of its cells open with a column's name.
    Such a row reads on its own; a row of bare cells needs its table's header line to be read."""
    cells = [cell for cell in line.split(CELL_SEPARATOR) if cell.strip()]
    named = [cell for cell in cells if 0 < cell.find(LABEL_SEPARATOR) <= MAX_LABEL_CHARS]
    return len(cells) >= 2 and len(named) * 2 > len(cells)


def row_labels(line: str) -> list[str]:
    """The column names a row written by `labelled_row` gives its cells, in order (a cell without one
    is left out)."""
    cells = (cell.strip(" |") for cell in line.split(CELL_SEPARATOR))
    return [cell[:at] for cell in cells if 0 < (at := cell.find(LABEL_SEPARATOR)) <= MAX_LABEL_CHARS]


def unstacked(row: list[str | None]) -> list[list[str | None]]:
    """A row whose every filled cell holds the same number (two or more) of lines, figures among
    them, is that many rows that the PDF drew without rules between them ("Indiana\\nIowa" beside
    "81,935\\n8,785"); any other row is itself (a cell whose text wraps is one cell)."""
    split = [cell.split("\n") if cell and cell.strip() else None for cell in row]
    filled = [lines for lines in split if lines is not None]
    counts = {len(lines) for lines in filled}
    if len(filled) < 2 or len(counts) != 1 or (stack := counts.pop()) < 2:
        return [row]
    if not any(all(_FIGURE.match(line) for line in lines) for lines in filled):
        return [row]
    return [[lines[n] if lines else cell for lines, cell in zip(split, row, strict=True)] for n in range(stack)]


class TableWriter:
    """Tables as text, page after page: remembers the last header for a table that continues."""

    def __init__(self) -> None:
        self._header: list[str] | None = None

    def text(self, rows: list[list[str | None]]) -> str:
        """One table's rows as lines (empty rows dropped)."""
        cleaned = [[clean_cell(cell) for cell in part] for row in rows for part in unstacked(row)]
        cleaned = [row for row in cleaned if any(row)]
        if not cleaned:
            return ""
        lines: list[str] = []
        header = self._header if self._header is not None and len(self._header) == len(cleaned[0]) else None
        if is_header(cleaned[0]):
            header = cleaned[0]
            self._header = header
            lines.append(CELL_SEPARATOR.join(header))
            cleaned = cleaned[1:]
        lines.extend(labelled_row(row, header) for row in cleaned)
        return "\n".join(lines)


_LABEL = re.compile(rf"(^|{re.escape(CELL_SEPARATOR)})[^|:\n]{{1,{MAX_LABEL_CHARS}}}?{re.escape(LABEL_SEPARATOR)}")


def without_labels(text: str) -> str:
    """The table rows of `text` (lines with a cell separator) with their column names removed: the
    bare cells. Other lines ("Note: …") are left as they are."""
    return "\n".join(
        _LABEL.sub(lambda m: m.group(1), line) if CELL_SEPARATOR in line else line for line in text.split("\n")
    )
