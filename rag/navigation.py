"""Navigation pages: a table of contents or an index, recognised by its shape, not its words.

Such a page lists many topics, each with a leader (dots, an ellipsis or a run of spaces) and page
numbers, so it shares terms with almost any question about the manual and wins retrieval without
stating anything. Retrieval leaves such chunks out of its hits, for a question and `ragchat search`
alike (they stay among the candidates, where the transparency table shows them). A line counts as a
pointer when a leader is followed by page numbers ("12", "8, 11, 27", "34–36", "xii") at its end; a
chunk is navigation when enough of its lines are pointers, or when leader dots are most of its text
(an index cut into chunks mid-leader; a form of dotted blanks to fill in counts too, and holds
nothing to answer from).
"""

from __future__ import annotations

import re

_POINTER = re.compile(
    r"\S.*?(?:(?:\.\s?){3,}|…+|\s{3,})\s*(?:\d{1,4}(?:\s*[,–-]\s*\d{1,4})*|[ivxlc]{1,7})\s*$",
    re.IGNORECASE,
)
MIN_POINTER_LINES = 3
MIN_POINTER_SHARE = 0.4
# Dots of leaders ("c . . . . . 8, 11"), four or more in a run, spaced or not.
_LEADER_DOTS = re.compile(r"\.(?:\s?\.){3,}")
MIN_LEADER_SHARE = 0.5


def is_navigation(text: str) -> bool:
    """A table of contents or index chunk: at least MIN_POINTER_LINES lines, and MIN_POINTER_SHARE of
    its lines, end in a leader and page numbers; or leader dots are MIN_LEADER_SHARE of its visible
    characters. An index's long leaders fill a chunk with a line or two, cut mid-leader (". . . 58",
    "coef . . ."), which the line count alone misses."""
    lines = [line for line in text.splitlines() if line.strip()]
    pointers = sum(1 for line in lines if " | " not in line and _POINTER.match(line))
    if pointers >= MIN_POINTER_LINES and pointers >= MIN_POINTER_SHARE * len(lines):
        return True
    visible = sum(1 for char in text if not char.isspace())
    dots = sum(match.group().count(".") for match in _LEADER_DOTS.finditer(text))
    return visible > 0 and dots >= MIN_LEADER_SHARE * visible
