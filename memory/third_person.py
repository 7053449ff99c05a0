"""A first-person statement turned into a third-person memory line by rules, no model.

"I'm a Project Finance Analyst." → "User is a Project Finance Analyst."
"Every Monday morning I run a batch job that refreshes our data warehouse." →
"Every Monday morning User runs a batch job that refreshes the company's data warehouse."
"We hold team meetings every Friday at 10 AM." → "Company holds team meetings every Friday at 10 AM."

The memory model's summary is preferred (it reads better), but the 0.5B model sometimes drops what
matters ("My manager is Anna Schmidt." → "User is Anna Schmidt."; the schedule of a recurring job
left out): then this rewrite is written instead, because it keeps every word the user said.
"""

from __future__ import annotations

import re
from typing import Literal

_SUBJECTS = {
    "USER": {
        "i": "User",
        "i'm": "User is",
        "im": "User is",
        "i've": "User has",
        "i'd": "User would",
        "i'll": "User will",
    },
    "COMPANY": {
        "we": "Company",
        "we're": "Company is",
        "we've": "Company has",
        "we'd": "Company would",
        "we'll": "Company will",
    },
}
_COMPANY_OBJECTS = {"our": "the company's", "us": "the company", "ours": "the company's", "ourselves": "the company"}
_OBJECTS = {
    # "I refresh our warehouse": a user fact that mentions the company.
    "USER": {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves", **_COMPANY_OBJECTS},
    "COMPANY": _COMPANY_OBJECTS,
}
_SAME_AS_COMPANY = {"company", "firm", "organisation", "organization", "business", "employer"}
_BE = {"am": "is", "are": "is", "was": "was", "were": "was", "have": "has", "do": "does"}
_MODALS = {"can", "could", "will", "would", "should", "must", "may", "might", "shall"}
_ADVERBS = {"always", "never", "often", "usually", "just", "also", "still", "now", "sometimes", "normally", "generally"}
_IRREGULAR_PAST = {
    "ran", "went", "began", "became", "took", "made", "got", "left", "led", "built", "bought", "sold", "moved",
    "had", "did", "was", "were", "set", "put", "met", "saw", "won", "lost", "grew", "chose", "wrote", "spent",
}  # fmt: skip
_TOKEN = re.compile(r"[A-Za-z']+|[^A-Za-z']+")

Target = Literal["USER", "COMPANY"]


def third_person(statement: str, target: Target) -> str:
    """The statement with its first-person subject, verb and possessives turned to the third person."""
    tokens = _TOKEN.findall(statement.strip().rstrip(".!"))
    out: list[str] = []
    conjugate_next = False
    subject_done = False
    skip_noun = False
    for index, token in enumerate(tokens):
        lower = token.lower().replace("’", "'")
        if not token[0].isalpha():
            out.append(token)
            continue
        if not subject_done and lower in _SUBJECTS[target]:
            out.append(_SUBJECTS[target][lower])
            subject_done = True
            conjugate_next = lower in ("i", "we")
            continue
        if not subject_done and target == "USER" and lower == "my":
            out.append("User's")
            subject_done = True
            continue
        if not subject_done and target == "COMPANY" and lower == "our":
            subject_done = True
            if _next_word(tokens, index) in _SAME_AS_COMPANY:
                out.append("Company")  # "Our company moved" → "Company moved"
                skip_noun = True
            else:
                out.append("Company's")  # "Our team uses Jira" → "Company's team uses Jira"
            continue
        if skip_noun:
            skip_noun = False
            if lower in _SAME_AS_COMPANY:
                out.pop()  # the space between "Company" and the noun
                continue
        if conjugate_next:
            if lower in _ADVERBS:
                out.append(token)
                continue
            out.append(_third_person_verb(token))
            conjugate_next = False
            continue
        out.append(_OBJECTS[target].get(lower, token))
    text = "".join(out).strip()
    text = text[0].upper() + text[1:] if text else text
    return text + "."


def _next_word(tokens: list[str], index: int) -> str:
    for token in tokens[index + 1 :]:
        if token[0].isalpha():
            return token.lower()
    return ""


def _third_person_verb(verb: str) -> str:
    lower = verb.lower()
    if lower in _BE:
        return _BE[lower]
    if lower in _MODALS or lower.endswith("ed") or lower in _IRREGULAR_PAST:
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"
