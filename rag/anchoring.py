"""An answer anchored to the evidence that states its own answer phrase.

The reply's hidden phrase line is the model's answer copied from the evidence ("Rollo"), written
under the prompt's trap-aware instruction before anything else. The sentence it then writes does
not always state it: on the SQuAD 2.0 Normans set, 19 of 81 answered answerable questions got a
sentence without their phrase ("Who was the Norse leader?": phrase "Rollo", answer "The Norman
dynasty had a major political, cultural and military impact on medieval Europe [2]."), 10 of them
with the right phrase. Such a sentence answers another question; the evidence that holds the phrase
answers this one, and is shown as a quotation of it (rag/quotes.py: whole sentences, never spliced
from a page's layout), cited to its excerpt. So is a sentence that states the phrase but does not read
as one ("Total [3].", "Of: 172 [1].", a row's cells run together). Only an answer the support check
kept is anchored this way, unless `RAGCHAT_QUOTE_UNSUPPORTED` lets a quotation stand in for a withheld
one.
"""

from __future__ import annotations

from core.schemas import Hit
from rag.quotes import holds, quotation, quoted
from rag.readability import readable


def anchor(
    text: str, phrase: str | None, question: str, hits: list[Hit], opening: str, english: bool = True
) -> str | None:
    """The quotation of the evidence that states the phrase (`opening: "…" [n].`), when the model's
    text does not state it or does not read as sentences (rag/readability.py: a bare label, cells of a
    row) and the quotation does; None when it states it readably, or no evidence states it.
    `english`: the text is English (only English is checked for a verb)."""
    if not phrase or not phrase.strip():
        return None
    states = holds(text, phrase)
    if states and readable(text, english):
        return None
    found = quotation(phrase, question, hits)
    if found is None:
        return None
    quote = quoted(opening, *found)
    return quote if not states or readable(quote, english) else None  # a row of bare cells is no better
