"""Which questions carry the memory lines into their prompt: those about the user or their company.

Memory lines in a prompt they do not bear on distract a small model: asked how much a donor gave, the
1.5B answered with the memory line "The user earns six figures." A question gets the lines when it
speaks of the user or their company:

- it holds a first-person word of English or of its own language ("my role", "notre délai", "unsere
  Firma"), which is how people ask about themselves; a generic "we" ("how do we compute a mean?")
  carries them too, at the cost of a prompt line, not of an answer;
- or it is close in meaning to one of the lines (`memory_relevant_similarity`, the cosine of the
  question, or of it in the lines' third person, to its closest line), which catches "What is
  Northwind's fiscal year end?" and "Which city does the user live in?".

Everything else (a question about a document's people, companies, figures) is asked without the facts,
but with the user's standing wishes about answers ("The user prefers short answers."): a line the
preference gate (memory/preference_gate.py) recognises holds no name or figure to copy, and bears on
every answer.
"""

from __future__ import annotations

import re

from memory.extractor import FIRST_PERSON, FIRST_PERSON_PLURAL

# Object pronouns the extractor's tables leave out ("¿me explicas…?", "mi spieghi", "aplica-se a mim").
_OBJECT_PRONOUNS = {"fr": "me m' moi", "es": "me nos", "it": "mi me", "pt": "me mim", "nl": "me", "de": "mich mir"}
# Languages that drop the subject pronoun say "I" and "we" in the verb: the first persons of be, have, can
# and must ("¿tengo que…?", "possiamo…?", "temos de…?"); "sono" is left out (also "they are").
_FIRST_PERSON_VERBS = {
    "es": "soy estoy tengo puedo debo somos estamos tenemos podemos debemos",
    "it": "ho posso devo siamo abbiamo possiamo dobbiamo",
    "pt": "sou estou tenho posso devo somos estamos temos podemos devemos",
}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]*)?")


def _first_person(lang: str) -> frozenset[str]:
    tables = (FIRST_PERSON, FIRST_PERSON_PLURAL, _OBJECT_PRONOUNS, _FIRST_PERSON_VERBS)
    return frozenset(word for table in tables for key in {"en", lang} for word in table.get(key, "").split())


_WORDS: dict[str, frozenset[str]] = {lang: _first_person(lang) for lang in FIRST_PERSON}


def speaks_of_self(question: str, lang: str) -> bool:
    """Whether the question holds a first-person word of English or of `lang` ("j'" of "j'ai" too)."""
    words = _WORDS.get(lang, _WORDS["en"])
    for word in _WORD.findall(question.casefold().replace("’", "'")):
        if word in words or ("'" in word and word.split("'")[0] + "'" in words):
            return True
    return False
