"""Is a new memory entry already known, a new value for a known fact, or new?

Embedding similarity alone cannot tell a repeat from a change: with all-MiniLM-L6-v2,
"…team meetings every Friday at 10 AM" vs "…every Thursday at 9 AM" scores 0.973, higher than the
true repeat "…on Fridays at 10 AM" (0.959). So similarity finds the entry the new one is about, and
the words decide: nothing new → duplicate, new words (a day, a place, a tool) → the old entry is
replaced. Some facts hold one value at a time (a person's role, where they live) although the
sentences share few words ("User is a Project Finance Analyst." vs "User moved to the risk team.",
similarity 0.33; "The user now reports to Gustavo Reyes." vs "The user reports to Petra Novak.", 0.42,
the names outweighing the rest): those are matched by slot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

from core.text import tokenize

_LIGHT_TERMS = {
    "user", "user's", "compani", "company'", "company's", "work", "everi", "now", "current", "still", "also", "their",
    "just",
}  # fmt: skip

_JOB = (
    r"(analyst|engineer|manager|developer|scientist|designer|lead|director|consultant|accountant|officer|"
    r"specialist|architect|administrator|intern|head|researcher|associate|partner|executive|founder|student|"
    r"teacher|nurse|doctor|lawyer)s?\b"
)
_SLOTS: dict[str, re.Pattern[str]] = {
    "role": re.compile(
        rf"^user( (is (now )?(an? |the )?([\w-]+ ){{0,4}}{_JOB}|works as\b|(was |has been |got )?promoted\b)|"
        r"'s (role|job|title|position) )"
    ),
    "team": re.compile(
        r"^user( (works (in|on|for) the\b|is (in|on|part of) the\b|(moved to|joined|(was |has been )?transferred to) "
        r"the\b)|'s team\b)"
    ),
    "employer": re.compile(r"^user (works (for|at) (?!the\b)|is employed by|joined (?!the\b))"),
    "manager": re.compile(r"^user( (now )?reports (directly )?to\b|'s (line |direct )?(manager|boss|supervisor) )"),
    "home": re.compile(r"^user (lives|is based|is located|resides|relocated|moved to (?!the\b))"),
    "headquarters": re.compile(r"^company (is headquartered|is based|'s headquarters|has its headquarters)"),
}
# A move ("User moved to the risk team", "User was promoted to …") makes both the old role and the
# old team stale; a plain statement of a team ("User works in the finance team") leaves a role alone.
_MOVE = re.compile(r"^user (moved to the\b|joined the\b|(was |has been |got )?(transferred|promoted)\b|is now\b)")
_MOVE_REPLACES = {"role", "team"}


class DedupResult(BaseModel):
    action: Literal["add", "duplicate", "replace"]
    match: str | None = None  # the existing entry it repeats or replaces
    similarity: float = 0.0
    nearest: str | None = None  # for "add": the closest entry (whose similarity is `similarity`)


_CLOCK_12H = re.compile(r"\b(1[0-2]|0?[1-9])(?:[:.]([0-5]\d))?\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)


def canonical_times(text: str) -> str:
    """Clock times on the 24-hour clock ("5 pm" → "17:00", "9.30am" → "09:30"), so that a fact said
    with the other clock reads as the same fact to the rules and to the model."""

    def clock(match: re.Match[str]) -> str:
        hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
        return f"{hour:02d}:{match.group(2) or '00'}"

    return _CLOCK_12H.sub(clock, text)


def normalize(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def significant_terms(text: str) -> set[str]:
    return {t for t in tokenize(canonical_times(text)) if t not in _LIGHT_TERMS}


def _subject_first(entry: str) -> str:
    """The entry lowercased, "The user …" read as "user …" (both forms are in memory files)."""
    lowered = entry.strip().lower()
    return lowered[4:] if lowered.startswith(("the user", "the company")) else lowered


def slot_of(entry: str) -> str | None:
    lowered = _subject_first(entry)
    return next((slot for slot, pattern in _SLOTS.items() if pattern.match(lowered)), None)


def slots_replaced_by(entry: str) -> set[str]:
    """The slots whose current entry this new one makes stale."""
    if _MOVE.match(_subject_first(entry)):
        return set(_MOVE_REPLACES)
    slot = slot_of(entry)
    return {slot} if slot else set()


def different_slots(new: str, old: str) -> bool:
    """Two facts about different things (a role and a team) both stand, however alike they read."""
    new_slot, old_slot = slot_of(new), slot_of(old)
    return bool(new_slot and old_slot and old_slot not in slots_replaced_by(new))


def compare(
    new: str, existing: Sequence[str], embed: Callable[[list[str]], list[list[float]]], related_similarity: float
) -> DedupResult:
    """`related_similarity`: the cosine from which a new fact is a restatement or an update of an entry."""
    if not existing:
        return DedupResult(action="add")
    wanted = normalize(new)
    for entry in existing:
        if normalize(entry) == wanted:
            return DedupResult(action="duplicate", match=entry, similarity=1.0)
    vectors = np.asarray(embed([new, *existing]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
    similarities = vectors[1:] @ vectors[0]
    order = np.argsort(-similarities)
    best = existing[int(order[0])]
    best_similarity = float(similarities[order[0]])
    if best_similarity >= related_similarity:
        if significant_terms(new) <= significant_terms(best):
            return DedupResult(action="duplicate", match=best, similarity=best_similarity)
        if not different_slots(new, best):
            return DedupResult(action="replace", match=best, similarity=best_similarity)
    if slots := slots_replaced_by(new):
        for index in order:
            if slot_of(existing[int(index)]) in slots:
                return DedupResult(action="replace", match=existing[int(index)], similarity=float(similarities[index]))
    return DedupResult(action="add", similarity=best_similarity, nearest=best)
