"""Evidence, not chunks: the sentences (or table rows) of the retrieved chunks that bear on the
question, within a token budget.

A 200-token chunk holds one relevant sentence among six or eight; giving the model whole chunks costs
prefill time (the first token waits for every prompt token) and invites it to answer from a
neighbouring sentence about something else. Sentences are ranked by cosine similarity to the question
(the embedder that indexed the chunks) plus the IDF-weighted share of the question's terms they hold,
and the best are added while they fit `budget_tokens`; the spans of one chunk that touch are merged
into one excerpt, in document order. Each excerpt becomes a Hit whose chunk is the original with
`text` cut to the excerpt and `char_start`/`char_end` moved to where the excerpt sits on its page, so
citations, the support check and the page highlight all point at it. bench/evidence_selection.py
measured the budget against how often the evidence still holds the gold answer (ARCHITECTURE.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.schemas import Hit
from core.text import ends_sentence, estimate_tokens, tokenize
from ingestion.tables import is_labelled_row, row_labels

Embed = Callable[[list[str]], list[list[float]]]

# A sentence ends at . ! ? (not inside a number like 3.5 or an initial like "J. Smith" followed by
# lower case) followed by white space; a line of a table (cells joined by " | ") or a heading line is
# a unit of its own.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
# A list or section number ("1.", "2.3.", "iv.", "a)") is not a sentence: it stays with what follows.
_ENUMERATOR = re.compile(r"\(?(\d{1,3}(\.\d{1,3})*|[ivxlc]{1,5}|[a-z])[.)]", re.IGNORECASE)
_OWN_LINE = re.compile(r"^\s*(#{1,6}\s|.*\s\|\s)")
_TABLE_ROW = " | "
MAX_TABLE_ROWS = 20


@dataclass(frozen=True)
class Span:
    start: int
    end: int


def sentence_spans(text: str) -> list[Span]:
    """(start, end) of each sentence or table row of `text`, in order, without surrounding space."""
    spans: list[Span] = []
    offset = 0
    block_start: int | None = None
    for line in text.splitlines(keepends=True):
        line_start, offset = offset, offset + len(line)
        if _OWN_LINE.match(line) or not line.strip():
            if block_start is not None:
                spans += _prose_spans(text, block_start, line_start)
                block_start = None
            if line.strip():
                spans.append(_trimmed(text, line_start, offset))
        elif block_start is None:
            block_start = line_start
    if block_start is not None:
        spans += _prose_spans(text, block_start, len(text))
    return [s for s in spans if s.end > s.start]


def _prose_spans(text: str, start: int, end: int) -> list[Span]:
    spans: list[Span] = []
    cursor = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if not ends_sentence(text[max(cursor, match.start() - 40) : match.start()]):
            continue  # "Oct. 28", "Pub. L. No. 105-304"
        sentence = _trimmed(text, cursor, match.start())
        if _ENUMERATOR.fullmatch(text, sentence.start, sentence.end):
            continue
        spans.append(sentence)
        cursor = match.end()
    spans.append(_trimmed(text, cursor, end))
    return spans


def _trimmed(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


class EvidencePicker:
    """Cut retrieved chunks down to the excerpts that bear on the question, within a token budget."""

    def __init__(
        self,
        embed: Embed,
        budget_tokens: int,
        min_chunk_tokens: int,
        lexical_weight: float,
        header_tokens: int,
        neighbour_weight: float,
    ) -> None:
        """`budget_tokens`: most estimated tokens of evidence (each chunk's header line included); a
        chunk of fewer than `min_chunk_tokens` tokens (a short note) is one unit, kept whole;
        `lexical_weight`: how much the question's terms found in a sentence add to its cosine
        similarity; `neighbour_weight`: the share of the previous sentence's score (same chunk) a
        sentence scores at least."""
        self._embed = embed
        self._neighbour_weight = neighbour_weight
        self._budget = budget_tokens
        self._min_chunk_tokens = min_chunk_tokens
        self._lexical_weight = lexical_weight
        self._header_tokens = header_tokens

    def pick(self, question: str, hits: list[Hit]) -> list[Hit]:
        """The best sentences by similarity to the question (a table row with its table's header),
        added while they fit the budget, in their documents' order; the best always goes in."""
        units = [(n, span) for n, hit in enumerate(hits) for span in self._units(hit.chunk.text)]
        if not units:
            return hits
        texts = [hits[n].chunk.text[s.start : s.end] for n, s in units]
        score = relevance(self._embed, question, texts, self._lexical_weight)
        if self._neighbour_weight:
            score = self._with_neighbours(units, score)
        cost = [estimate_tokens(text) for text in texts]
        is_row = [_TABLE_ROW in text for text in texts]
        order = np.argsort(-score, kind="stable").tolist()
        keep: set[int] = set()
        used = 0

        def add(units_wanted: set[int]) -> None:
            nonlocal used
            new = units_wanted - keep
            extra = sum(cost[i] for i in new)
            owners = {units[i][0] for i in new} - {units[i][0] for i in keep}
            extra += self._header_tokens * len(owners)
            if new and (not keep or used + extra <= self._budget):
                keep.update(new)
                used += extra

        for best in order:
            add({best} | self._header_rows(units, is_row, best, texts[best]))
        excerpts: list[Hit] = []
        for n, hit in enumerate(hits):
            mine = sorted(i for i in keep if units[i][0] == n)
            for run in _runs(mine):
                excerpts.append(_excerpt(hit, units[run[0]][1].start, units[run[-1]][1].end))
        return excerpts

    def _with_neighbours(self, units: list[tuple[int, Span]], score: np.ndarray) -> np.ndarray:
        """A sentence scores at least `neighbour_weight` x the score of the one before it in its chunk
        (its own, not raised in turn): the match names the subject, the next sentence often answers
        ("They were led by Rollo")."""
        previous = np.zeros_like(score)
        for i in range(1, len(units)):
            if units[i - 1][0] == units[i][0]:
                previous[i] = score[i - 1]
        return np.maximum(score, self._neighbour_weight * previous)

    def _units(self, text: str) -> list[Span]:
        if estimate_tokens(text) < self._min_chunk_tokens:
            return [_trimmed(text, 0, len(text))] if text.strip() else []
        spans = sentence_spans(text)
        if len(spans) > 1 and _cut_row(text[spans[0].start : spans[0].end], text[spans[1].start : spans[1].end]):
            return spans[1:]
        return spans

    @staticmethod
    def _header_rows(units: list[tuple[int, Span]], is_row: list[bool], best: int, text: str) -> set[int]:
        """A table row of bare cells is read with its header: the rows from its table's first one (at
        most MAX_TABLE_ROWS back). A row that names its columns ("Company: … | City: …") needs none:
        the rows above it would only spend the budget on other rows."""
        if not is_row[best] or is_labelled_row(text):
            return set()
        owner, first = units[best][0], best
        while first > 0 and units[first - 1][0] == owner and is_row[first - 1] and best - first < MAX_TABLE_ROWS:
            first -= 1
        return set(range(first, best + 1))


def _cut_row(first: str, second: str) -> bool:
    """Whether a chunk's first line is the end of a table row its start cut off: its column names are
    the last ones of the next row's ("| City: Torrance | No. Of: 388" above "Notice Date: … | Company:
    … | City: … | No. Of: …"). Such values name no subject, and a small model took them for another
    row's ("388 employees" for the company of the row after them); the previous chunk holds the row
    whole. A whole row whose leading cells are empty reads the same, and is left out too: what it
    lacks is usually what names it."""
    cut, whole = row_labels(first), row_labels(second)
    return 0 < len(cut) < len(whole) and whole[-len(cut) :] == cut


def relevance(embed: Embed, question: str, texts: list[str], lexical_weight: float) -> np.ndarray:
    """How well each text bears on the question: its cosine similarity to the question plus
    `lexical_weight` x the IDF-weighted share of the question's terms it holds."""
    vectors = np.asarray(embed([question, *texts]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    score = vectors[1:] @ vectors[0]
    if lexical_weight:
        score = score + lexical_weight * term_coverage(question, texts)
    return score


def term_coverage(question: str, texts: list[str]) -> np.ndarray:
    """For each text, the IDF-weighted share of the question's terms it holds (IDF over `texts`):
    a rare question word found in a sentence counts more than a common one."""
    wanted = set(tokenize(question))
    if not wanted or not texts:
        return np.zeros(len(texts), dtype=np.float32)
    present = [wanted & set(tokenize(text)) for text in texts]
    idf = {t: math.log(1 + len(texts) / (1 + sum(t in p for p in present))) for t in wanted}
    total = sum(idf.values())
    return np.array([sum(idf[t] for t in p) / total for p in present], dtype=np.float32)


def _runs(indexes: list[int]) -> list[list[int]]:
    """[1, 2, 3, 6, 7] → [[1, 2, 3], [6, 7]]."""
    runs: list[list[int]] = []
    for index in indexes:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _excerpt(hit: Hit, start: int, end: int) -> Hit:
    return hit.model_copy(update={"chunk": hit.chunk.excerpt(start, end)})
