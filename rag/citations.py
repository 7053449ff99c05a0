"""Turn the model's inline [n] markers into checked, structured citations.

Only markers that name a source actually given to the model survive; every other marker is
removed from the text. When the model cites nothing (small models often forget), the sources whose
words cover the answer are attributed by overlap and marked method="support", never presented as
the model's own citation.
"""

from __future__ import annotations

import re

from ragchat.schemas import Citation, Hit
from ragchat.settings import REFUSAL_TEXT

_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TABLE_ROW = " | "
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were "
    "what when where which who with does did do how much many".split()
)
SUPPORT_MIN_OVERLAP = 0.5
SNIPPET_MAX_CHARS = 320


def content_words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOPWORDS}


def split_sentences(text: str) -> list[str]:
    """Sentences of prose (PDF line breaks inside a sentence are ignored); table rows one by one."""
    units: list[str] = []
    prose: list[str] = []
    for line in text.splitlines():
        if _TABLE_ROW in line or not line.strip():
            units.extend(_SENTENCE_END.split(" ".join(prose)))
            prose = []
            units.append(line)
        else:
            prose.append(line.strip())
    units.extend(_SENTENCE_END.split(" ".join(prose)))
    return [u.strip() for u in units if u.strip()]


def is_refusal(text: str) -> bool:
    """The model said the sources do not hold the answer (exactly or nearly our refusal line)."""
    normal = " ".join(_MARKER.sub("", text).split()).lower().replace("’", "'")
    lead = REFUSAL_TEXT.lower()[:40]
    return normal.startswith(lead) or normal.startswith(lead.replace("don't", "do not")) or not normal


def best_snippet(chunk_text: str, claim: str) -> str:
    """The sentence (or table row) of the chunk that shares the most words with the claim."""
    claim_words = content_words(claim)
    candidates = split_sentences(chunk_text) or [chunk_text]
    best = max(candidates, key=lambda s: len(content_words(s) & claim_words))
    return best if len(best) <= SNIPPET_MAX_CHARS else best[: SNIPPET_MAX_CHARS - 1] + "…"


def _marker_numbers(group: str) -> list[int]:
    return [int(n) for n in re.split(r"\s*[,;]\s*", group.strip())]


def markers_in(text: str) -> list[int]:
    """The source numbers a sentence cites, in order, each once."""
    numbers = [n for match in _MARKER.finditer(text) for n in _marker_numbers(match.group(1))]
    return list(dict.fromkeys(numbers))


def strip_markers(text: str) -> str:
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(_MARKER.sub("", text).split()))


def resolve_citations(answer: str, hits: list[Hit]) -> tuple[str, list[Citation]]:
    """Validate markers against the hits given to the model; return cleaned text and citations."""
    valid = range(1, len(hits) + 1)

    def keep_valid(match: re.Match[str]) -> str:
        numbers = [n for n in _marker_numbers(match.group(1)) if n in valid]
        return "".join(f"[{n}]" for n in numbers)

    cleaned = re.sub(r"[ \t]+([.,;:])", r"\1", _MARKER.sub(keep_valid, answer)).strip()
    citations: list[Citation] = []
    seen: set[int] = set()
    for sentence in split_sentences(cleaned):
        claim = _MARKER.sub("", sentence)
        for match in _MARKER.finditer(sentence):
            for number in _marker_numbers(match.group(1)):
                if number not in seen:
                    seen.add(number)
                    citations.append(_citation(number, hits[number - 1], claim, "marker"))
    if citations or not hits:
        return cleaned, citations
    return _attribute_by_support(cleaned, hits)


def _attribute_by_support(answer: str, hits: list[Hit]) -> tuple[str, list[Citation]]:
    answer_words = content_words(answer)
    if not answer_words:
        return answer, []
    coverage = [len(answer_words & content_words(hit.chunk.text)) / len(answer_words) for hit in hits]
    best = max(range(len(hits)), key=coverage.__getitem__)
    if coverage[best] < SUPPORT_MIN_OVERLAP:
        return answer, []
    number = best + 1
    return f"{answer} [{number}]", [_citation(number, hits[best], answer, "support")]


def _citation(number: int, hit: Hit, claim: str, method: str) -> Citation:
    chunk = hit.chunk
    return Citation(
        marker=number,
        source=chunk.source,
        page=chunk.page,
        chunk_id=chunk.chunk_id,
        locator=chunk.locator,
        snippet=best_snippet(chunk.text, claim),
        method=method,  # type: ignore[arg-type]
    )
