"""Turn the model's inline [n] markers into checked, structured citations.

Only markers that name a source actually given to the model survive; every other marker is
removed from the text. A marker whose source lacks a figure of the claim (or most of its words) that
another given source holds is moved to that source and marked method="corrected": the evaluation
found the 1.5B model citing the wrong one of its four sources in 7 of 17 answered questions while the
right passage was in the prompt (e.g. "99 EUR" cited to the returns policy). When the model cites
nothing (small models often forget), the sources whose words cover the answer are attributed by
overlap and marked method="support", never presented as the model's own citation.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from core.schemas import Citation, Hit
from core.settings import Settings
from core.text import ends_sentence
from rag.messages import REFUSAL_TEXT

_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# A sentence ends at . ! ? and white space, but not after initials ("U.S. registry", as the answer
# grammar has it: rag/answer_format.py) or an abbreviation ("Oct. 28", "No. 105": core.text).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TABLE_ROW = " | "
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were "
    "what when where which who with does did do how much many".split()
)
# A marker is moved when its source lacks the claim's figures that another source has, or when another
# source covers more of the claim's words by CitationRules.correction_margin (and at least correction_min_coverage).
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


_AFTER_STOP = re.compile(r"([.!?])((?:[ \t]*\[\d+\])+)[.!?]?")
_REPEATED = re.compile(r"(\[\d+\])(?:[ \t]*\1)+")


def tidy_markers(text: str) -> str:
    """ "people. [1]" → "people [1]." (a marker after the full stop would be read as the next
    sentence's), and "[1] [1]" → "[1]"."""
    return _AFTER_STOP.sub(lambda m: f"{m.group(2)}{m.group(1)}", _REPEATED.sub(r"\1", text))


def content_words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOPWORDS}


def split_sentences(text: str) -> list[str]:
    """Sentences of prose (PDF line breaks inside a sentence are ignored); table rows one by one."""
    units: list[str] = []
    prose: list[str] = []
    for line in text.splitlines():
        if _TABLE_ROW in line or not line.strip():
            units.extend(_prose_sentences(" ".join(prose)))
            prose = []
            units.append(line)
        else:
            prose.append(line.strip())
    units.extend(_prose_sentences(" ".join(prose)))
    return [u.strip() for u in units if u.strip()]


def _prose_sentences(prose: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(prose):
        if ends_sentence(prose[max(start, match.start() - 40) : match.start()]):
            sentences.append(prose[start : match.start()])
            start = match.end()
    return [*sentences, prose[start:]]


# How small models word a refusal instead of our exact line (seen in evaluation runs): the answer
# opens with one of these and cites nothing.
_REFUSAL_OPENINGS = re.compile(
    r"^(the (provided |given )?(sources?|documents?|context|passages?|texts?) (do|does|did) not "
    r"(contain|mention|say|include|provide|specify|state|have)|"
    r"(the )?(provided |given )?(sources?|documents?|context) (don't|doesn't) "
    r"(contain|mention|say|include|provide|specify|state)|"
    r"there is no (information|mention)|no (information|mention) (about|of|on|regarding)|"
    r"i (cannot|can't|am unable to|am not able to) (answer|find|determine)|i could not find|"
    r"(it is|it's) not (mentioned|stated|specified) in the)"
)


def is_refusal(text: str) -> bool:
    """The model said the sources do not hold the answer: our refusal line (or nearly), or another
    common refusal opening in an answer that cites nothing."""
    normal = " ".join(_MARKER.sub("", text).split()).lower().replace("’", "'")
    lead = REFUSAL_TEXT.lower()[:40]
    if not normal or normal.startswith(lead) or normal.startswith(lead.replace("don't", "do not")):
        return True
    return bool(_REFUSAL_OPENINGS.match(normal)) and not _MARKER.search(text)


def best_snippet(chunk_text: str, claim: str, max_chars: int) -> str:
    """The sentence (or table row) of the chunk that shares the most words with the claim."""
    claim_words = content_words(claim)
    candidates = split_sentences(chunk_text) or [chunk_text]
    best = max(candidates, key=lambda s: len(content_words(s) & claim_words))
    return best if len(best) <= max_chars else best[: max_chars - 1] + "…"


def _marker_numbers(group: str) -> list[int]:
    return [int(n) for n in re.split(r"\s*[,;]\s*", group.strip())]


def markers_in(text: str) -> list[int]:
    """The source numbers a sentence cites, in order, each once."""
    numbers = [n for match in _MARKER.finditer(text) for n in _marker_numbers(match.group(1))]
    return list(dict.fromkeys(numbers))


def strip_markers(text: str) -> str:
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(_MARKER.sub("", text).split()))


class CitationRules(BaseModel):
    """How markers are checked and moved, and how long a snippet is (settings: citation_*)."""

    attribution_min_term_share: float
    correction_margin: float
    correction_min_coverage: float
    snippet_chars: int

    @classmethod
    def from_settings(cls, settings: Settings) -> CitationRules:
        return cls(
            attribution_min_term_share=settings.citation_attribution_min_term_share,
            correction_margin=settings.citation_correction_margin,
            correction_min_coverage=settings.citation_correction_min_coverage,
            snippet_chars=settings.citation_snippet_chars,
        )


def resolve_citations(
    answer: str, hits: list[Hit], rules: CitationRules, correct: bool = True
) -> tuple[str, list[Citation]]:
    """Validate markers against the hits given to the model; return cleaned text and citations.
    `correct`: move a marker whose source lacks its claim to the one that holds it (for a model that
    was not constrained to cite; a grammar-constrained model's markers are its own choice, and the
    support check judges them)."""
    valid = range(1, len(hits) + 1)

    def keep_valid(match: re.Match[str]) -> str:
        numbers = [n for n in _marker_numbers(match.group(1)) if n in valid]
        return "".join(f"[{n}]" for n in numbers)

    # Markers written after a full stop ("… Berengaria. [2]") go before it: split into sentences, the
    # marker would otherwise be a sentence of its own, the claim it cites would read as uncited (the
    # support check could not take its citation away) and its snippet would be chosen for no claim.
    cleaned = tidy_markers(re.sub(r"[ \t]+([.,;:])", r"\1", _MARKER.sub(keep_valid, answer)).strip())
    corrected: dict[int, int] = {}
    if correct:
        cleaned, corrected = _correct_markers(cleaned, hits, rules)
        cleaned = tidy_markers(cleaned)
    citations: list[Citation] = []
    seen: set[int] = set()
    for sentence in split_sentences(cleaned):
        claim = _MARKER.sub("", sentence)
        for match in _MARKER.finditer(sentence):
            for number in _marker_numbers(match.group(1)):
                if number not in seen:
                    seen.add(number)
                    citation = _citation(number, hits[number - 1], claim, "marker", rules)
                    if number in corrected:
                        citation = citation.model_copy(update={"method": "corrected", "cited_as": corrected[number]})
                    citations.append(citation)
    if citations or not hits:
        return cleaned, citations
    return _attribute_by_support(cleaned, hits, rules)


def uncite_unsupported(text: str, citations: list[Citation], unsupported: set[str]) -> tuple[str, list[Citation]]:
    """A sentence its sources do not back keeps its words (the answer flags it) but loses its markers,
    and a source no backed sentence cites any more is no longer a citation: nothing is shown as cited
    that the cited text does not hold."""
    if not unsupported:
        return text, citations
    for sentence in split_sentences(text):
        if strip_markers(sentence) in unsupported and markers_in(sentence):
            text = text.replace(sentence, strip_markers(sentence), 1)
    left = set(markers_in(text))
    return text, [c for c in citations if c.marker in left]


def recite(
    text: str, citations: list[Citation], moves: dict[str, list[int]], hits: list[Hit], rules: CitationRules
) -> tuple[str, list[Citation]]:
    """Give each sentence of `moves` (its words, markers stripped) the markers of the sources that
    hold it (one, or several that hold it together), and the citations the text then has; a source
    that only a moved sentence cites is method="corrected", with the number the model wrote as
    `cited_as`."""
    written = {c.marker: c for c in citations}
    moved_from: dict[int, int] = {}
    for sentence in split_sentences(text):
        words = strip_markers(sentence)
        if words not in moves:
            continue
        old = markers_in(sentence)
        numbers = moves[words]
        stop = words[-1] if words[-1] in ".!?" else ""
        marks = " ".join(f"[{number}]" for number in numbers)
        text = text.replace(sentence, f"{words[: len(words) - len(stop)]} {marks}{stop}", 1)
        if old:
            for number in numbers:
                moved_from.setdefault(number, old[0])
    sentences = [(strip_markers(s), markers_in(s)) for s in split_sentences(text)]
    result: list[Citation] = []
    for number in markers_in(text):
        # A sentence that was not moved still cites it: the citation made for that sentence stands,
        # as the model wrote it or as resolve_citations had already corrected it (with its cited_as).
        own = any(number in marks and words not in moves for words, marks in sentences)
        if number in written and own:
            result.append(written[number])
            continue
        claim = " ".join(words for words, marks in sentences if number in marks)
        citation = _citation(number, hits[number - 1], claim, "corrected", rules)
        result.append(citation.model_copy(update={"cited_as": moved_from.get(number)}))
    return text, result


def citation_note(citation: Citation) -> str | None:
    """How a citation was made, when the model did not write it as it stands."""
    if citation.method == "support":
        return "attributed by word overlap; the model cited nothing"
    if citation.method == "corrected":
        return f"the model cited [{citation.cited_as}], which does not hold this; moved to the source that does"
    return None


def _correct_markers(text: str, hits: list[Hit], rules: CitationRules) -> tuple[str, dict[int, int]]:
    """Move each marker whose source does not hold its claim to the given source that does.

    A marker's claim is the text since the previous marker (a marker right after another shares its
    claim). Returns the text and {new number: number the model wrote} for the moved markers."""
    corrected: dict[int, int] = {}
    written: set[int] = set()
    claim = ""
    last_end = 0
    parts: list[str] = []
    for match in _MARKER.finditer(text):
        between = text[last_end : match.start()]
        if between.strip(" \t.,;:"):
            claim = between
        numbers = []
        for number in _marker_numbers(match.group(1)):
            better = _better_source(claim, number, hits, rules)
            written.add(number)
            if better != number:
                corrected.setdefault(better, number)
            numbers.append(better)
        parts.append(between + "".join(f"[{n}]" for n in dict.fromkeys(numbers)))
        last_end = match.end()
    parts.append(text[last_end:])
    # A source the model also cited itself elsewhere keeps method "marker".
    return "".join(parts), {new: old for new, old in corrected.items() if new not in written}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _better_source(claim: str, number: int, hits: list[Hit], rules: CitationRules) -> int:
    words = content_words(claim)
    if len(words) < 2:
        return number
    texts = [hit.chunk.text for hit in hits]
    coverage = [len(words & content_words(t)) / len(words) for t in texts]
    figures = _numbers(claim)
    cited = number - 1
    if figures and not figures <= _numbers(texts[cited]):
        holders = [i for i, t in enumerate(texts) if figures <= _numbers(t)]
        if holders:
            return max(holders, key=coverage.__getitem__) + 1
        return number
    best = max(range(len(hits)), key=coverage.__getitem__)
    if coverage[best] >= rules.correction_min_coverage and coverage[best] - coverage[cited] >= rules.correction_margin:
        return best + 1
    return number


def _attribute_by_support(answer: str, hits: list[Hit], rules: CitationRules) -> tuple[str, list[Citation]]:
    answer_words = content_words(answer)
    if not answer_words:
        return answer, []
    coverage = [len(answer_words & content_words(hit.chunk.text)) / len(answer_words) for hit in hits]
    best = max(range(len(hits)), key=coverage.__getitem__)
    if coverage[best] < rules.attribution_min_term_share:
        return answer, []
    number = best + 1
    return tidy_markers(f"{answer} [{number}]"), [_citation(number, hits[best], answer, "support", rules)]


def _citation(
    number: int, hit: Hit, claim: str, method: Literal["marker", "support", "corrected"], rules: CitationRules
) -> Citation:
    chunk = hit.chunk
    return Citation(
        marker=number,
        source=chunk.source,
        page=chunk.page or None,
        chunk_id=chunk.chunk_id,
        locator=chunk.locator,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        snippet=best_snippet(chunk.text, claim, rules.snippet_chars),
        method=method,
    )
