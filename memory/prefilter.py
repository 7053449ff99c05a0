"""Cheap rules on the form of a message, read before the answer: does it only state things about the
user or their company and ask nothing ("I'm a Project Finance Analyst.")? Then the turn's reply is
what memory noted (rag/stages.py NoteFacts) instead of a search of the documents.

This is routing only. What is stored, and in which file, is decided by the memory gate and the model
(memory/fact_gate.py, memory/extractor.py) on every message, after the answer.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

MAX_STATEMENTS = 3

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD = re.compile(r"[A-Za-z']+")
_GREETING = re.compile(
    r"^(hi|hello|hey|thanks|thank you|thx|cheers|good (morning|afternoon|evening|night)|bye|goodbye|ok|okay|"
    r"great|cool|nice|sure|yes|no|yep|nope)\b([\s!.,]+\w+){0,3}[\s!.,]*$",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(who|what|when|where|why|how|which|whose|is|are|was|were|do|does|did|can|could|would|should|will|"
    r"shall|may|has|have|had)\b",
    re.IGNORECASE,
)
# Requests phrased as statements are questions for the documents, not facts.
_REQUEST = re.compile(
    r"\b(i'?d like to know|i want to know|i wonder|i'?m (looking|searching) for|i need (to know|to find|the)|"
    r"i'?m (asking|talking) about|i was (asking|talking) about|i meant?\b|"
    r"(tell|show|give|find|list|summari[sz]e|explain|compare) (me|us)\b|can you|could you|please)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(tell|show|give|find|list|summari[sz]e|explain|compare|describe|search|look|answer|translate|write)\b",
    re.IGNORECASE,
)
_VAGUE = re.compile(
    r"\b(i think so|i guess|maybe|perhaps|not sure|i don'?t know|kind of|sort of|whatever|never ?mind)\b",
    re.IGNORECASE,
)
# A remark about the moment is not a lasting fact.
_MOMENTARY = re.compile(
    r"\b(today|tonight|right now|at the moment|this (morning|afternoon|evening)|currently feeling|"
    r"i'?m (tired|hungry|bored|busy|happy|sad|sick)|i feel)\b",
    re.IGNORECASE,
)
_USER_WORDS = {"i", "i'm", "im", "i've", "i'd", "i'll", "my", "me", "mine", "myself"}
_COMPANY_WORDS = {"we", "we're", "we've", "we'd", "we'll", "our", "ours", "us", "ourselves"}
_MIN_CONTENT_WORDS = 2
_FUNCTION_WORDS = _USER_WORDS | _COMPANY_WORDS | {
    "a", "an", "the", "is", "am", "are", "was", "be", "to", "of", "and", "or", "in", "on", "at", "so",
    "it", "that", "this", "just", "really", "very", "too", "also", "as", "for", "with",
}  # fmt: skip


class Statement(BaseModel):
    """A sentence that may state a fact, and whom the rules say it is about."""

    text: str
    target: Literal["USER", "COMPANY"]


class Screen(BaseModel):
    statements: list[Statement]
    only_statements: bool  # the message holds statements and no question or request for the documents
    skip_reason: str | None = None


def screen(message: str) -> Screen:
    sentences = [s.strip() for s in _SENTENCE.findall(message) if s.strip(" .!?")]
    statements: list[Statement] = []
    asks = False
    reasons: list[str] = []
    for sentence in sentences:
        kind = _classify(sentence)
        if kind == "ask":
            asks = True
        elif isinstance(kind, Statement):
            statements.append(kind)
        else:
            reasons.append(kind)
    statements = statements[:MAX_STATEMENTS]
    skip = None
    if not statements:
        skip = _summarize_reasons(reasons, asks)
    return Screen(statements=statements, only_statements=bool(statements) and not asks, skip_reason=skip)


def _classify(sentence: str) -> Statement | Literal["ask"] | str:
    """A candidate Statement, "ask" for a question or request, or why the sentence holds no fact."""
    bare = sentence.strip()
    if bare.endswith("?") or _QUESTION_START.match(bare) or _REQUEST.search(bare) or _IMPERATIVE.match(bare):
        return "ask"
    if _GREETING.match(bare):
        return "a greeting"
    words = [w.lower() for w in _WORD.findall(bare)]
    target = _subject(words)
    if target is None:
        return "not about you or your company"
    if _VAGUE.search(bare):
        return "too vague to remember"
    if _MOMENTARY.search(bare):
        return "about the moment, not a lasting fact"
    if len([w for w in words if w not in _FUNCTION_WORDS]) < _MIN_CONTENT_WORDS:
        return "too short to hold a fact"
    return Statement(text=bare, target=target)


def _subject(words: list[str]) -> Literal["USER", "COMPANY"] | None:
    """Whom the sentence is about: the first first-person word decides ("Every Monday I refresh our
    warehouse" is about the user; "Our company moved to GCP" about the company)."""
    for word in words:
        if word in _USER_WORDS:
            return "USER"
        if word in _COMPANY_WORDS:
            return "COMPANY"
    return None


def _summarize_reasons(reasons: list[str], asks: bool) -> str:
    if asks and not reasons:
        return "a question or request, not a fact"
    return reasons[0] if reasons else "no statement"
