"""What the document says, quoted: whole sentences around an answer phrase, cleaned of layout noise.

When the model's sentence cannot be shown (it does not state the answer phrase it copied, or its
evidence does not hold it), the passage that states the phrase is shown instead, as a quotation the
reader can tell from an answer: `The document says: "…" [2].` A quotation is never spliced from
fragments:

- a page's lines are joined into runs of prose, and a run ends where a line does not go on from the
  one before it: a blank line, a table row, a bullet, or a line that opens a new sentence (a capital
  "The", "This", "Before"…) after a line that did not end one, which is where a three-column page
  puts the next column's words (PDFium reads columns line by line on some layouts);
- a run is cut into sentences, and the quotation is the sentence that holds the phrase, trimmed to
  MAX_QUOTE_CHARS around it at clause boundaries, with an ellipsis where it was trimmed;
- a table row is quoted as its cells, each after its column's name ("Company: Twitter, Inc.; City: San
  Francisco; No. Of: 240");
- words broken at a line end ("con-\nducted") are joined.
"""

from __future__ import annotations

import re

from core.schemas import Hit
from core.text import tokenize
from rag.citations import split_sentences

MAX_QUOTE_CHARS = 240
COVERED_TERMS = 0.75
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
_TABLE_ROW = " | "
_SENTENCE_END = re.compile(r"[.!?:;][\"'”’)]*\s*$")
_NEW_SENTENCE = re.compile(
    r"^(?:The|This|These|That|Those|Before|After|If|In|On|For|Each|Any|A|An|We|You|It|Section|Note|•|-|–|\d+\.|\(\w\))\s"
)
_BROKEN_WORD = re.compile(r"(\w)-\s*\n\s*([a-z])")
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def holds(text: str, phrase: str) -> bool:
    """Whether the text has the phrase's words in a row (case and punctuation aside); a phrase
    without words is held by anything."""
    wanted = _words(phrase)
    words = _words(text)
    return any(words[i : i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1))


def runs(text: str) -> list[tuple[str, bool]]:
    """(text, is a table row): the text's table rows one by one, each as `table_row` gives it, and its
    prose as runs of lines that go on from each other."""
    text = _BROKEN_WORD.sub(r"\1\2", text)
    found: list[tuple[str, bool]] = []
    current: list[str] = []
    for raw in text.split("\n"):
        line = " ".join(raw.split())
        starts_anew = bool(current) and not _SENTENCE_END.search(current[-1]) and _NEW_SENTENCE.match(line)
        if not line or _TABLE_ROW in line or starts_anew:
            if current:
                found.append((" ".join(current), False))
            current = []
            if _TABLE_ROW in line:
                found.append((table_row(line), True))
                continue
        if line:
            current.append(line)
    if current:
        found.append((" ".join(current), False))
    return found


def table_row(line: str) -> str:
    """A table row as its non-empty cells, each after its column's name when the row has them. A cell
    left empty by the parser can still hold a rule's pipe ("Name | | | Last" splits into "|"
    pieces); it is dropped with the other empty ones."""
    cells = (cell.strip(" |") for cell in line.split(_TABLE_ROW))
    return "; ".join(cell for cell in cells if cell)


def trimmed(sentence: str, phrase: str) -> str:
    """The sentence, or the clauses around the phrase when it is long, with "…" where it was cut."""
    if len(sentence) <= MAX_QUOTE_CHARS:
        return sentence
    clauses = re.split(r"(?<=[,;:])\s+", sentence)
    at = next((i for i, clause in enumerate(clauses) if holds(clause, phrase)), None)
    if at is None:  # the phrase spans clauses: keep the sentence's start
        return sentence[:MAX_QUOTE_CHARS].rsplit(" ", 1)[0] + " …"
    start = end = at
    while end + 1 < len(clauses) and len(" ".join(clauses[start : end + 2])) <= MAX_QUOTE_CHARS:
        end += 1
    while start > 0 and len(" ".join(clauses[start - 1 : end + 1])) <= MAX_QUOTE_CHARS:
        start -= 1
    kept = " ".join(clauses[start : end + 1])
    return ("… " if start > 0 else "") + kept + (" …" if end + 1 < len(clauses) else "")


def covers(unit: str, phrase: str) -> bool:
    """Whether a sentence or row holds the phrase's figures and at least COVERED_TERMS of its terms: a
    phrase the model wrote in its own words ("The Q2 revenue of Westland is 8.15 million") over a row
    that states it ("Region: Westland | … | Q2 revenue: 8.15 million")."""
    terms = set(tokenize(phrase))
    figures = set(_FIGURE.findall(phrase))
    held = set(tokenize(unit))
    return bool(terms) and figures <= set(_FIGURE.findall(unit)) and len(terms & held) >= COVERED_TERMS * len(terms)


def quotable(hits: list[Hit]) -> list[tuple[int, str]]:
    """(excerpt number, text) of every sentence and table row of the evidence, as a quotation shows it."""
    return [
        (number, sentence.strip())
        for number, hit in enumerate(hits, 1)
        for run, row in runs(hit.chunk.text)
        for sentence in ([run] if row else split_sentences(run))
        if sentence.strip()
    ]


def quotation(phrase: str, question: str, hits: list[Hit]) -> tuple[int, str] | None:
    """(excerpt number, quoted text) of the sentence or table row that states the phrase (word for
    word, else in its terms and figures: `covers`) and shares most terms with the question (the earlier
    excerpt, then the shorter, on a tie); None when no evidence states it."""
    if not _words(phrase):
        return None
    asked = set(tokenize(question))
    best: tuple[tuple[int, int, int, int], int, str] | None = None
    for number, sentence in quotable(hits):
        exact = holds(sentence, phrase)
        if not exact and not covers(sentence, phrase):
            continue
        rank = (0 if exact else 1, -len(asked & set(tokenize(sentence))), number, len(sentence))
        if best is None or rank < best[0]:
            best = (rank, number, trimmed(sentence, phrase))
    return None if best is None else (best[1], best[2])


def quoted(opening: str, number: int, text: str) -> str:
    """The quotation as the answer shows it: `The document says: "…" [n].`"""
    return f'{opening}: "{text.rstrip()}" [{number}].'
