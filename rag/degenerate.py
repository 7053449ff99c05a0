"""A generation that is not an answer: mostly whitespace, citation markers without a claim before
them, or the same few words over and over. A small model under a grammar can produce one (the
grammar's sentence body may be a lone space or a "(2)."); it is refused, never shown with citations.

Only the text's shape is read (letters, whitespace, where the markers stand, word repetition), not
its words, so the rule holds in any language written with letters.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

# One or more markers in a row ("[1]", "[2][3] [4]"): citing two sources at once is one citation.
_MARKER_RUN = re.compile(r"(?:\s*\[\d+\])+")
_OPEN_MARKER = re.compile(r"\[\d*$")
_WORD = re.compile(r"[^\W\d_]{2,}")
_WHITESPACE_RUN = re.compile(r"\s{20,}")

# A claim with no word before its marker ("(2). [3]") counts as empty; from this many empty claims,
# if they are at least half of all claims, the reply is degenerate.
MIN_EMPTY_CLAIMS = 2
# Distinct words / words below this, over at least REPEAT_MIN_WORDS words: a loop.
REPEAT_MIN_WORDS = 12
REPEAT_MAX_DISTINCT_SHARE = 0.3
# Whitespace over this share of the reply (or one run of 20 or more): mostly blank.
MAX_WHITESPACE_SHARE = 0.5


class Degeneration(BaseModel):
    """Why a reply is not an answer, or None."""

    reason: str | None = None


def degeneration(text: str) -> Degeneration:
    """Why `text` (the visible reply) is degenerate, or reason None when it reads as an answer. An
    empty reply is not judged here: the pipeline already treats it as saying nothing."""
    stripped = text.strip()
    if not stripped:
        return Degeneration()
    words = _WORD.findall(_MARKER_RUN.sub(" ", stripped))
    if not words:
        return Degeneration(reason="no words")
    if _WHITESPACE_RUN.search(stripped) or sum(ch.isspace() for ch in stripped) > MAX_WHITESPACE_SHARE * len(stripped):
        return Degeneration(reason="mostly whitespace")
    claims = _MARKER_RUN.split(_OPEN_MARKER.sub("", stripped))[:-1]  # the text before each marker run
    empty = sum(not _WORD.search(claim) for claim in claims)
    if empty >= MIN_EMPTY_CLAIMS and 2 * empty >= len(claims):
        return Degeneration(reason="citation markers without text")
    lowered = [w.lower() for w in words]
    if len(lowered) >= REPEAT_MIN_WORDS and len(set(lowered)) < REPEAT_MAX_DISTINCT_SHARE * len(lowered):
        return Degeneration(reason="the same words repeated")
    return Degeneration()


def worth_keeping(reply: str) -> bool:
    """A reply to keep for later (a document's card, a stored answer): not empty, not degenerate."""
    return bool(reply.strip()) and degeneration(reply).reason is None
