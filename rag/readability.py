"""Does an answer read as an answer? The evaluation scores every answer with it, and an answer that
does not is shown as the quotation of the evidence that states its phrase (rag/anchoring.py).

An answer spliced from a page's layout reads as fragments: table cells in a row ("10/12/2015, 1 2 / 1
3 / 2 0 15, Twitter, Inc., San Francisco, 240"), two columns' lines run together ("within the scope
of The FAA must receive comments"), a footnote mark glued to a word ("called.RData5"). A readable
answer is made of sentences, each with a verb, none of those. English answers only are checked for
a verb (no tagger runs offline here): a finite verb is one of the common ones below, a modal, or a
word ending in -ed or -s after a subject-like word; other languages get the layout checks alone.
"""

from __future__ import annotations

import re

from rag.citations import split_sentences, strip_markers

_VERB = re.compile(
    r"\b(is|are|was|were|be|been|being|am|has|have|had|do|does|did|can|could|will|would|shall|should|may|might|"
    r"must|says?|said|states?|stated|shows?|lists?|gives?|gave|means?|takes?|took|makes?|made|needs?|uses?|used|"
    r"includes?|included|requires?|required|provides?|provided|contains?|remains?|becomes?|became|"
    r"[a-z]{3,}(?:ed|es))\b",
    re.IGNORECASE,
)
# Three or more short comma- or pipe-separated pieces holding digits: cells of a table row; unless
# each names its column ("City: Torrance; Employees: 388"), the form a table row is quoted in.
_CELL_RUN = re.compile(r"(?:[^,|;.]{0,14}\d[^,|;.]{0,14}[,|;]\s*){3,}")
_NAMED_CELL = re.compile(r"^\s*[^\W\d][^:;|]{0,40}:\s*\S")
_SPACED_DIGITS = re.compile(r"\b\d \d / \d")
_GLUED_MARK = re.compile(r"[a-z]{3}\d\b(?![.,]\d)")
_SPLICE = re.compile(
    r"\b(?:of|the|to|in|on|by|for|with|and|or|a|an|is|are|this|that) (?:The|This|These|Before|After)\b"
)


def problems(sentence: str, english: bool = True) -> list[str]:
    """What keeps a sentence from reading as one (empty when it reads)."""
    text = strip_markers(sentence).strip()
    found = []
    if english and not _VERB.search(text):
        found.append("no verb")
    if "|" in text or _unnamed_cells(text) or _SPACED_DIGITS.search(text):
        found.append("table cells")
    if _GLUED_MARK.search(text):
        found.append("glued mark")
    if _SPLICE.search(text):
        found.append("spliced lines")
    return found


def readable(answer: str, english: bool = True) -> bool:
    """The answer has a verb and none of its sentences shows layout fragments. (The verb is looked
    for in the whole answer: the sentence splitter cuts after abbreviations such as "Inc.".)"""
    sentences = [s for s in split_sentences(answer) if strip_markers(s).strip()]
    if not sentences or (english and not _VERB.search(strip_markers(answer))):
        return False
    return not any(p for s in sentences for p in problems(s, english=False))


def _unnamed_cells(text: str) -> bool:
    """A run of table cells, unless every ";"-separated piece of the text names its column."""
    if not _CELL_RUN.search(text):
        return False
    pieces = [piece for piece in text.strip(' "“”').split(";") if piece.strip()]
    if pieces and len(pieces[-1].split()) <= 2 and pieces[-1].rstrip().endswith("."):
        pieces = pieces[:-1]  # a label the sentence splitter cut at its abbreviation ("No. Of: 44")
    return not (len(pieces) >= 2 and all(_NAMED_CELL.match(piece) for piece in pieces))
