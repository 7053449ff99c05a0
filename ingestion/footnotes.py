"""Footnote marks kept out of words.

A PDF's text layer gives a superscript footnote mark as a plain digit glued to the word it follows:
"written to a file called .RData5 in the current directory", where the page's foot says "5 The leading
“dot” in this file name…". Searched for, quoted or copied into an answer, ".RData5" is a name that
does not exist. A mark is taken out when the page's foot starts a line with its number, it follows a
word of at least MIN_WORD_LETTERS letters (not "x1" in code), and it is glued that way only once above
the foot: a mark points to its note once, while a name with a digit in it tends to recur.
"""

from __future__ import annotations

import re

MIN_WORD_LETTERS = 3
# The foot is looked for in this last share of the page's lines.
FOOT_SHARE = 0.5
_NOTE_START = re.compile(r"^(\d{1,2})(?=\s|$)")


def _glued(number: str) -> re.Pattern[str]:
    return re.compile(rf"(?<=[^\W\d_]{{{MIN_WORD_LETTERS}}}){number}(?=[\s,.;:)]|$)")


def without_footnote_marks(text: str) -> str:
    """The page's text with its footnote marks taken out of the words they are glued to."""
    lines = text.split("\n")
    first_foot_line = int(len(lines) * (1 - FOOT_SHARE))
    notes: dict[str, int] = {}  # number → the line its note starts on
    for index in range(first_foot_line, len(lines)):
        found = _NOTE_START.match(lines[index].strip())
        if found and found.group(1) not in notes:
            notes[found.group(1)] = index
    if not notes:
        return text
    foot = min(notes.values())
    body = "\n".join(lines[:foot])
    for number in notes:
        pattern = _glued(number)
        if len(pattern.findall(body)) == 1:
            body = pattern.sub("", body)
    return "\n".join([body, *lines[foot:]])
