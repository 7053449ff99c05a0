"""Choose, then write: the passages an overview of a long document is written from.

Reading every section before answering (map, then reduce: rag/document_stages.py SummariseSections)
costs the model a pass over the whole document: 23 minutes for 113 pages on a laptop. By the time a
document is searchable we already hold what is needed to choose what matters in it, so an overview,
a summary or a request for key points is written in one model call over a few passages chosen
without the model:

- its structure: the document's opening (title, abstract or preface) and the first sentences under
  its sections' headings (ingestion/outline.py), spread evenly over the document when it has more
  sections than there is room for;
- what is central to it: chunks picked by maximal marginal relevance against the centroid of all its
  chunk vectors (the ones stored at ingest), so they are typical of the document and unlike each other;
- what the request asks for: a few more passages, the chunks nearest the request's own vector among
  those not chosen yet, within their own small budget.

The first two do not depend on the request, so every request about a document gets the same passages
first, in document order, and the request's own after them: the prompt then starts the same way each
time (the system prompt, then those passages), and llama.cpp reuses what it already read of it. The
card writer reads that prefix in the background once a document is indexed, so a request that comes
after it waits only for its own passages and words (0.6 s to the first token instead of 6.0 for R-intro,
1.5B, when the request's vector still moved every passage). Each passage is the first sentences of its
chunk (PASSAGE_TOKENS), so more of the document fits the prompt budget; each is citable as usual.

Before the model has read that prefix (a request that comes as soon as the document is searchable,
before its card is written), reading it takes most of the wait: ~800 prompt tokens are 11 s for the
1.5B on two cores. So the answer opens with one sentence written over the first passages alone (the
document's title and opening, `opening_count`; a prompt of ~170 tokens), and the rest over every
passage, the model continuing that sentence as the start of its own reply (llama.cpp reuses the
system prompt and the first passages, read for the opening). The two prompts cost llama.cpp about
what one does; the whole answer took −1 to +8 s against one call in the benches (docs/performance.md).
(A second turn that gave the other passages after the first turn's reply,
so that no passage is read twice, made the 1.5B restate its first sentence.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core.schemas import Chunk, Hit, Scores
from core.text import estimate_prompt_tokens
from rag.evidence import sentence_spans
from rag.navigation import is_navigation

# A heading with fewer letters is an index's letter ("M", "Xp") or a stray mark, not a section title.
MIN_TITLE_LETTERS = 3
_LETTER = re.compile(r"[^\W\d_]")

PASSAGE_TOKENS = 70
MMR_DIVERSITY = 0.5  # weight of unlikeness to what is chosen, against typicality
STRUCTURE_SHARE = 0.5  # at most this share of the passages are section openings
NAVIGATION_SECTION_SHARE = 1 / 3  # a section this much of whose chunks are navigation is navigation


@dataclass(frozen=True)
class Choice:
    """The chosen passages, in document order, and how many came from each rule."""

    hits: list[Hit]  # the same for every request about the document, in document order
    structure: int
    central: int
    requested: list[Hit]  # the request's own, nearest its vector, in document order


def opening(text: str, tokens: int) -> int:
    """Where the first whole sentences of a text end, up to about `tokens` (at least the first one)."""
    spans = sentence_spans(text)
    if not spans:
        return len(text)
    end = spans[0].end
    for span in spans[1:]:
        if estimate_prompt_tokens(text[: span.end]) > tokens:
            break
        end = span.end
    return end


def section_openings(chunks: list[Chunk]) -> list[int]:
    """Indexes of the chunks that open the document or a section (their heading path changes)."""
    found = [0] if chunks else []
    for i in range(1, len(chunks)):
        if chunks[i].heading_path and chunks[i].heading_path != chunks[i - 1].heading_path:
            found.append(i)
    return found


def spread(indexes: list[int], count: int) -> list[int]:
    """`count` of the indexes, evenly spread from the first to the last."""
    if len(indexes) <= count:
        return indexes
    if count <= 1:
        return indexes[:count]
    return sorted({indexes[round(i * (len(indexes) - 1) / (count - 1))] for i in range(count)})


def central(vectors: np.ndarray, chosen: list[int], count: int) -> list[int]:
    """`count` more indexes by maximal marginal relevance: typical of the document (near its centroid)
    and unlike the passages already chosen."""
    unit = _unit(vectors)
    centroid = unit.mean(axis=0)
    relevance = unit @ (centroid / (np.linalg.norm(centroid) + 1e-12))
    picked = list(chosen)
    likeness = np.max(unit @ unit[picked].T, axis=1) if picked else np.zeros(len(unit))
    added: list[int] = []
    for _ in range(count):
        score = (1 - MMR_DIVERSITY) * relevance - MMR_DIVERSITY * likeness
        score[picked] = -np.inf
        best = int(np.argmax(score))
        if not np.isfinite(score[best]):
            break
        picked.append(best)
        added.append(best)
        likeness = np.maximum(likeness, unit @ unit[best])
    return added


def navigation_chunks(chunks: list[Chunk]) -> set[int]:
    """Positions of the chunks that are navigation, or lie in a section (heading path) at least
    NAVIGATION_SECTION_SHARE of whose chunks are: a contents section's first chunk (its heading and
    the first two entries) or its last lines do not have enough leader lines to be recognised alone,
    but they belong to it. (A long section with one list of leader lines, a price list, stays.)"""
    navigation = [is_navigation(chunk.text) for chunk in chunks]
    counts: dict[tuple[str, ...], list[int]] = {}
    for chunk, listed in zip(chunks, navigation, strict=True):
        if chunk.heading_path:
            seen = counts.setdefault(tuple(chunk.heading_path), [0, 0])
            seen[0] += listed
            seen[1] += 1
    sections = {
        path for path, (listed, total) in counts.items() if listed and listed >= NAVIGATION_SECTION_SHARE * total
    }
    return {n for n, chunk in enumerate(chunks) if navigation[n] or tuple(chunk.heading_path) in sections}


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)


def choose_passages(
    chunks: list[tuple[Chunk, list[float]]],
    budget: int,
    header_tokens: int,
    query: list[float] | None = None,
    request_tokens: int = 0,
) -> Choice:
    """Passages of a document (its chunks with their stored vectors, any order) that fit `budget`
    prompt tokens: its openings and its most central, unlike chunks, in document order; then, with
    `query`, the chunks nearest it among the others, within `request_tokens` of the budget."""
    # A table of contents or an index lists every topic and states none: never a passage here.
    listed = navigation_chunks([chunk for chunk, _ in chunks])
    ordered = sorted((item for n, item in enumerate(chunks) if n not in listed), key=lambda i: i[0].chunk_index)
    if not ordered:
        return Choice(hits=[], structure=0, central=0, requested=[])
    ends = [opening(chunk.text, PASSAGE_TOKENS) for chunk, _ in ordered]
    texts = [chunk.text[:end] for (chunk, _), end in zip(ordered, ends, strict=True)]
    cost = [estimate_prompt_tokens(text) + header_tokens for text in texts]
    common = budget - request_tokens if query is not None else budget
    slots = max(1, common // max(1, round(sum(cost) / len(cost)))) if cost else 0
    structure = spread(section_openings([c for c, _ in ordered]), max(1, int(slots * STRUCTURE_SHARE)))
    vectors = np.asarray([vector for _, vector in ordered], dtype=np.float32)
    more = central(vectors, structure, slots - len(structure))
    picked = _within(cost, [*structure, *more], common)  # structure first: an overview is organised by it
    asked: list[int] = []
    if query is not None:
        near = _unit(vectors) @ (np.asarray(query) / (np.linalg.norm(query) + 1e-12))
        taken = set(picked)
        others = [i for i in np.argsort(-near, kind="stable").tolist() if i not in taken]
        asked = _within(cost, others, budget - sum(cost[i] for i in picked))

    def passages(indexes: list[int]) -> list[Hit]:  # each chunk cut to its opening sentences, as cited
        return [Hit(chunk=ordered[i][0].excerpt(0, ends[i]), scores=Scores()) for i in sorted(indexes)]

    openings = len(set(picked) & set(structure))
    return Choice(passages(picked), openings, len(picked) - openings, passages(asked))


def _within(cost: list[int], indexes: list[int], budget: int) -> list[int]:
    """The indexes, in the order given, that fit `budget` (a costlier one skipped, a cheaper one still taken)."""
    picked, used = [], 0
    for index in indexes:
        if used + cost[index] <= budget:
            picked.append(index)
            used += cost[index]
    return picked


def opening_count(hits: list[Hit], tokens: int, header_tokens: int) -> int:
    """How many of the first passages fit `tokens` (at least one): the document's opening, which the
    answer's first sentence is written from while the model has not read the rest (see the module)."""
    used = 0
    for count, hit in enumerate(hits):
        used += estimate_prompt_tokens(hit.chunk.text) + header_tokens
        if used > tokens:
            return max(1, count)
    return len(hits)


def outline_line(hits: list[Hit], opening: str) -> str:
    """The sections whose openings are among the chosen passages, each cited to its passage, as the
    overview's first line: known without the model, so it is shown at once ("Its sections include: 1
    Harbour cranes [1]; 3 Warehouse safety [3]."). Empty when fewer than two sections are chosen."""
    found: dict[str, int] = {}
    for number, hit in enumerate(hits, 1):
        path = hit.chunk.heading_path
        titled = path and len(_LETTER.findall(path[-1])) >= MIN_TITLE_LETTERS
        if titled and hit.chunk.text.lstrip().startswith(path[-1]) and path[-1] not in found:
            found[path[-1]] = number
    if len(found) < 2:
        return ""
    return f"{opening}: " + "; ".join(f"{title} [{number}]" for title, number in found.items()) + "."
