"""Which questions carry the memory facts into their prompt: those about the user or their company.

Memory lines in a prompt they do not bear on distract a small model: asked how much a donor gave, the
1.5B answered with the memory line "The user earns six figures." A question gets the facts when it
speaks of the user or their company:

- it holds a first-person word of English or of its own language ("my role", "notre délai", "unsere
  Firma"), which is how people ask about themselves; a generic "we" ("how do we compute a mean?")
  gets them too, a distraction the word alone cannot tell apart;
- or it is close in meaning to one of the facts (`memory_relevant_similarity`, the cosine of the
  question, or of it in the lines' third person, to its closest fact), which catches "What is
  Northwind's fiscal year end?" and "Which city does the user live in?";
- or it is in a language without a table of first-person words here, whose questions keep every line
  (the English lines and MiniLM's English vectors could not tell).

Every question keeps the lines the preference gate (memory/preference_gate.py, trained on messages;
on the stored lines of `eval/datasets/memory/relevance.jsonl` it recognised 5 of the 6 wishes and none
of the 51 facts) reads as a standing wish about answers ("The user prefers short answers.").
"""

from __future__ import annotations

import re

from memory.extractor import FIRST_PERSON, FIRST_PERSON_PLURAL

# Object pronouns the extractor's tables leave out ("¿me explicas…?", "mi spieghi", "aplica-se a mim").
_OBJECT_PRONOUNS = {"fr": "me m'", "es": "me mí nos", "it": "mi me", "pt": "me mim", "nl": "me m'n"}
# Languages that drop the subject pronoun say "I" and "we" in the verb: the first persons of be, have, can
# and must ("¿tengo que…?", "possiamo…?", "temos de…?"); "sono" is left out (also "they are").
_FIRST_PERSON_VERBS = {
    "es": "soy estoy tengo puedo debo somos estamos tenemos podemos debemos",
    "it": "ho posso devo siamo abbiamo possiamo dobbiamo",
    "pt": "sou estou tenho posso devo somos estamos temos podemos devemos",
}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]*)?")
_US = re.compile(r"\bU\.?S\.?(?![a-z])")  # the country, in capitals
_NUMBERED = re.compile(r"\bI(?=-|\s*\d)")  # "Form I-9"
_A_MINE = re.compile(r"\b(?:the|a|an|this|that|gold|coal|salt) mines?\b", re.IGNORECASE)
_TOKEN = re.compile(r"\S+")


def _without_false_selves(question: str) -> str:
    """The question without capitals that are no first person: "the US", a Roman "I" after a name that
    does not open a sentence ("Schedule I", "World War I") or before a number ("Form I-9"), and a mine
    that is a pit."""
    text = _A_MINE.sub(" ", _NUMBERED.sub(" ", _US.sub(" ", question)))
    tokens = _TOKEN.findall(text)
    kept: list[str] = []
    for n, token in enumerate(tokens):
        before = tokens[n - 1] if n else ""
        opens = n < 2 or tokens[n - 2][-1:] in ".?!:;"
        if token.rstrip(",.?!;:") == "I" and before[:1].isupper() and not opens:
            continue
        kept.append(token)
    return " ".join(kept)


def _first_person(lang: str) -> frozenset[str]:
    tables = (FIRST_PERSON, FIRST_PERSON_PLURAL, _OBJECT_PRONOUNS, _FIRST_PERSON_VERBS)
    return frozenset(word for table in tables for key in {"en", lang} for word in table.get(key, "").split())


_WORDS: dict[str, frozenset[str]] = {lang: _first_person(lang) for lang in FIRST_PERSON}


def has_word_table(lang: str) -> bool:
    """Whether `speaks_of_self` knows the language's first-person words."""
    return lang in _WORDS


def speaks_of_self(question: str, lang: str) -> bool:
    """Whether the question holds a first-person word of English or of `lang` ("j'" of "j'ai", the
    "we" of "we'd" too)."""
    words = _WORDS.get(lang, _WORDS["en"])
    text = _without_false_selves(question.replace("’", "'"))
    for word in _WORD.findall(text.casefold()):
        head = word.split("'")[0]
        if word in words or ("'" in word and (head + "'" in words or head in words)):
            return True
    return False
