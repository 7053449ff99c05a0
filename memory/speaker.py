"""Whose fact a memory line states, read from the message it came from: the grammatical person of
the clause the line restates. "Je travaille au service juridique et notre siège est à Lille." holds a
USER clause and a COMPANY one, and the model, which files a message's facts in one breath, filed
"L'utilisateur a le siège à Lille." under the user (issue 22: 8 of the 1.5B's 32 dev-set misses were
"we" facts in a message that also says "I").

A clause is a stretch of the message between punctuation or a conjunction (left out); its owner is
the person of its first first-person word ("Ich bin bei uns Controller" is the user's, "our busiest
month is December" the company's) and None when it has none. A line's terms vote for the owner of the
clause they occur in. Names get no more weight than other words: "We moved to Teams and I'm the admin
for it." → "The user is the admin for Teams." takes "Teams" from the company's clause to say what
"it" is. These are the closed-class words of each language's grammar, not phrasings of any message.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, NamedTuple

from core.text import tokenize
from memory.extractor import FIRST_PERSON, SUBJECT_TERMS, plural_words, statement_language

Owner = Literal["USER", "COMPANY"]

# Coordinating and causal conjunctions: each opens a clause that may have another subject.
CONJUNCTIONS: dict[str, str] = {
    "en": "and but so because since while although though whereas",
    "fr": "et mais donc car puisque alors",
    "de": "und aber denn weil sondern",
    "es": "y e pero porque aunque",
    "it": "e ed ma perché però",
    "pt": "e mas porque embora",
    "nl": "en maar want omdat",
}

_BREAK = re.compile(r"[.!?;:,\n()\[\]—–]+|\s-\s")
_WORD = re.compile(r"[^\W_][\w'’-]*")
_PREFIX = 4  # "utilisons" and "utilise", "report" and "reports": the same term by their start


class Clause(NamedTuple):
    text: str
    owner: Owner | None
    asked: bool  # part of a sentence that ends in "?"


def clauses(message: str, lang: str) -> list[Clause]:
    """The message's clauses, in order, each with its owner."""
    lang = statement_language(lang)
    conjunctions = set(CONJUNCTIONS["en"].split()) | set(CONJUNCTIONS[lang].split())
    plural = plural_words(lang)
    person = plural | set(FIRST_PERSON["en"].split()) | set(FIRST_PERSON[lang].split())
    found: list[Clause] = []
    pieces = _BREAK.split(message)
    ends = [m.group() for m in _BREAK.finditer(message)] + [""]
    for piece, end in zip(pieces, ends, strict=True):
        words: list[str] = []
        for word in _WORD.findall(piece):
            if word.lower() in conjunctions:
                if words:
                    found.append(_clause(words, plural, person, "?" in end))
                words = []
                continue
            words.append(word)
        if words:
            found.append(_clause(words, plural, person, "?" in end))
    return found


def _clause(words: list[str], plural: frozenset[str], person: frozenset[str], asked: bool) -> Clause:
    first = next((w for w in (word.lower().replace("’", "'") for word in words) if w in person), None)
    owner: Owner | None = None if first is None else "COMPANY" if first in plural else "USER"
    return Clause(text=" ".join(words), owner=owner, asked=asked)


def _terms(statement: str, lang: str) -> set[str]:
    """The statement's term prefixes, its subject's left out."""
    return {term[:_PREFIX] for term in tokenize(statement, lang) if term not in SUBJECT_TERMS}


def _held(statement: str, message: str, lang: str) -> list[tuple[Clause, int]]:
    """Each clause of the message with how many of the statement's terms it holds."""
    terms = _terms(statement, lang)
    return [
        (clause, len(terms & {t[:_PREFIX] for t in tokenize(clause.text, lang)})) for clause in clauses(message, lang)
    ]


def source_clause(statement: str, message: str, lang: str) -> Clause | None:
    """The clause of `message` that holds most of the statement's terms (None when none holds any);
    on a tie, the first one that has an owner."""
    ranked = [
        (weight, clause.owner is not None, -n, clause)
        for n, (clause, weight) in enumerate(_held(statement, message, lang))
    ]
    weight, _, _, clause = max(ranked, default=(0, False, 0, None), key=lambda rank: rank[:3])
    return clause if weight else None


def owner(statement: str, message: str, lang: str) -> Owner | None:
    """Whose fact the statement restates: the owner whose clauses hold most of its terms, if they hold
    at least as much as the clauses with no owner; None when that is unclear."""
    votes: Counter[Owner | None] = Counter()
    for clause, weight in _held(statement, message, lang):
        votes[clause.owner] += weight
    user, company, nobody = votes["USER"], votes["COMPANY"], votes[None]
    if company > user and company >= nobody:
        return "COMPANY"
    if user > company and user >= nobody:
        return "USER"
    return None
