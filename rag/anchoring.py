"""An answer anchored to the evidence sentence that states its own answer.

The reply's hidden phrase line is the model's answer copied from the evidence ("Rollo"), written
under the prompt's trap-aware instruction before anything else. The sentence it then writes does
not always state it: on the SQuAD 2.0 Normans set, 19 of 81 answered answerable questions got a
sentence without their phrase ("Who was the Norse leader?": phrase "Rollo", answer "The Norman
dynasty had a major political, cultural and military impact on medieval Europe [2]."), 10 of them
with the right phrase. Such a sentence answers another question; the evidence sentence that holds
the phrase answers this one, word for word, and is cited to the excerpt it is in. Only an answer
the support check kept is anchored: one it withheld (the model invented it) stays withheld, and a
phrase that merely occurs in the evidence does not turn that refusal into an answer.
"""

from __future__ import annotations

import re

from core.schemas import Hit
from core.text import tokenize
from rag.citations import split_sentences, strip_markers

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def states(text: str, phrase: str) -> bool:
    """Whether the text holds the phrase's words in a row (case, punctuation and markers aside)."""
    wanted = _words(phrase)
    if not wanted:
        return True
    words = _words(strip_markers(text))
    return any(words[i : i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1))


def stating_sentence(phrase: str, question: str, hits: list[Hit]) -> tuple[int, str] | None:
    """(excerpt number, sentence): of the evidence sentences that state the phrase, the one sharing
    most terms with the question, the earliest excerpt on a tie; None when no sentence states it."""
    asked = set(tokenize(question))
    best: tuple[tuple[int, int], int, str] | None = None
    for number, hit in enumerate(hits, 1):
        for sentence in split_sentences(hit.chunk.text):
            if not states(sentence, phrase):
                continue
            rank = (-len(asked & set(tokenize(sentence))), number)
            if best is None or rank < best[0]:
                best = (rank, number, sentence.strip())
    return None if best is None else (best[1], best[2])


def anchor(text: str, phrase: str | None, question: str, hits: list[Hit]) -> str | None:
    """The answer as the evidence sentence that states the phrase, cited ("… Rollo … [1]."), when
    the model's text does not state it; None when it does, or no evidence sentence does."""
    if not phrase or states(text, phrase):
        return None
    found = stating_sentence(phrase, question, hits)
    if found is None:
        return None
    number, sentence = found
    if "|" in sentence:  # a table row: its cells, as a line of text
        sentence = ", ".join(cell.strip() for cell in sentence.split("|") if cell.strip())
    stop = sentence[-1] if sentence[-1] in ".!?" else "."
    return f"{sentence.rstrip('.!?').rstrip()} [{number}]{stop}"
