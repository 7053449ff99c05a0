"""Output check: is each sentence of an answer supported by the chunks it cites?

Which chunks: a sentence's own [n] markers; a sentence without a marker is checked against every
chunk the answer cites; an answer that cites nothing, against every chunk the model was given (it
still gets a score, and a low one says the answer strayed from them).

Per sentence, three signals:
- overlap: the share of the sentence's terms (the BM25 tokenizer's: folded, stemmed, no stopwords)
  that occur in those chunks;
- similarity: the best cosine between the sentence and one sentence of those chunks (the embedder),
  which forgives a paraphrase that overlap does not;
- missing: numbers and names (capitalised words after the first) that the chunks do not contain. A
  fact changed in one figure or name reads as well supported by overlap and similarity alike; it is
  the hallucination that matters most, so any missing one makes the sentence unsupported.

With `support_question_words`, a sentence's ordinary words may be the question's when its figures and
names are all its sources' and one of them is not in the question ("Twitter laid off 240 people" over the
row "Company: Twitter, Inc. | No. Of: 240" for "twitter layoffs, how many people?"): they restate what
was asked, and what it answers is checked as before. Not for a sentence that negates, whose "not" no term
carries.

The thresholds come from measurements on real answers (bench/support_check.py; ARCHITECTURE.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from core.schemas import Citation, Hit, SentenceSupport
from core.text import tokenize
from rag.citations import markers_in, split_sentences, strip_markers

Embed = Callable[[list[str]], list[list[float]]]

# A name: initials as one ("U.S."), or a capitalised word with what a code adds to it ("P12.1.2",
# "B-737"); a number: digits not inside such a word (the tokenizer keeps "p12.1.2" whole).
_NAME = re.compile(r"(?<![\w.])(?:[A-Z]\.(?:[A-Z]\.)+|[A-Z][\w’'-]*(?:\.\d+)*)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_POSSESSIVE = re.compile(r"['’]s?$")
_POSSESSIVE_IN_TEXT = re.compile(r"(\w)['’]s\b")


class SupportChecker:
    def __init__(
        self,
        embed: Embed | None,
        min_overlap: float,
        min_similarity: float,
        min_terms: int,
        question_words: bool = False,
    ) -> None:
        """`min_terms`: shorter sentences ("Yes.", a bare "[1]") carry no checkable claim and are skipped;
        `question_words`: a sentence's ordinary words may be the question's (`_judge`)."""
        self._embed = embed
        self._min_terms = min_terms
        self._min_overlap = min_overlap
        self._min_similarity = min_similarity
        self._question_words = question_words

    def check(
        self, answer: str, citations: list[Citation], hits: list[Hit], lang: str = "en", asked: str = ""
    ) -> list[SentenceSupport]:
        """Every checkable sentence of the answer (written in `lang`) to the question `asked`, with its
        support; empty without sources."""
        if not hits:
            return []
        cited = [c.marker for c in citations if 1 <= c.marker <= len(hits)]
        fallback = list(dict.fromkeys(cited)) or list(range(1, len(hits) + 1))
        claims: list[tuple[str, list[int]]] = []
        for sentence in split_sentences(answer):
            text = strip_markers(sentence)
            if len(_terms(text)) < self._min_terms:
                continue
            own = [n for n in markers_in(sentence) if 1 <= n <= len(hits)]
            claims.append((text, own or fallback))
        return self._judged(claims, hits, lang, asked) if claims else []

    def backing(
        self, support: SentenceSupport, hits: list[Hit], lang: str = "en", together: int = 1, asked: str = ""
    ) -> SentenceSupport | None:
        """For a sentence its cited evidence does not hold: the judgment of the best other given
        excerpt that does hold it on its own (the model cited the wrong one); failing that, when
        `together` > 1, of up to that many excerpts that hold it together (`joint_backing`); or None."""
        others = [n for n in range(1, len(hits) + 1) if n not in support.sources]
        claims = [(support.sentence, [n]) for n in others]
        held = [j for j in self._judged(claims, hits, lang, asked) if j.supported] if claims else []
        if held:
            return max(held, key=lambda j: j.score)
        return self.joint_backing(support, hits, together, lang, asked) if together > 1 else None

    def joint_backing(
        self, support: SentenceSupport, hits: list[Hit], most: int, lang: str = "en", asked: str = ""
    ) -> SentenceSupport | None:
        """For a sentence no one given excerpt holds: two to `most` excerpts that hold it together, or
        None. A summary's sentence often names what several excerpts say ("covering classes,
        statistical models and graphics"); the excerpts are added greedily, each bringing the most of
        the sentence's terms the others lack, and the union is judged as one source (every name and
        number in it, and the share of its terms)."""
        left = _terms(support.sentence)
        owned = {n: _terms(hits[n - 1].chunk.keyword_text) & left for n in range(1, len(hits) + 1)}
        chosen: list[int] = []
        while len(chosen) < most and left:
            best = max((n for n in owned if n not in chosen), key=lambda n: (len(owned[n] & left), -n), default=None)
            if best is None or not owned[best] & left:
                break
            chosen.append(best)
            left -= owned[best]
        if len(chosen) < 2:
            return None
        judged = self._judged([(support.sentence, sorted(chosen))], hits, lang, asked)[0]
        return judged if judged.supported else None

    def _judged(
        self, claims: list[tuple[str, list[int]]], hits: list[Hit], lang: str, asked: str = ""
    ) -> list[SentenceSupport]:
        """Each (sentence, source numbers) judged against those sources, one embedding call for all."""
        similarities = self._similarities(claims, hits)
        return [
            self._judge(text, sources, hits, similarity, lang, asked)
            for (text, sources), similarity in zip(claims, similarities, strict=True)
        ]

    def _judge(
        self, text: str, sources: list[int], hits: list[Hit], similarity: float | None, lang: str, asked: str = ""
    ) -> SentenceSupport:
        # A chunk under its document's title and section path, as keyword search indexes it: a sentence
        # naming what the passage belongs to ("the WARN report's row for Paso Robles", "in R") is held.
        source_text = "\n".join(hits[n - 1].chunk.keyword_text for n in sources)
        available = _terms(source_text) | spelled_numbers(source_text)
        terms = _terms(text)
        overlap = len(terms & available) / len(terms)
        keys = key_terms(text)
        figures = {term.replace(",", "") for term in available}  # once, not for every key term
        missing = [term for term in keys if not _present(term, available, figures, source_text)]
        if (
            self._question_words
            and asked
            and not missing
            and _restates(text, keys, asked, available, figures, source_text)
        ):
            # Its facts are the sources' and one of them is what was asked for: the words around them
            # may restate the question ("laid off", "people" for a row's "No. Of: 240").
            overlap = len(terms & (available | _terms(asked))) / len(terms)
        score = max(overlap, similarity or 0.0)
        if all(hits[n - 1].chunk.lang != lang for n in sources):
            # Sources in another language than the answer share its figures and names, not its words
            # (an English answer over French minutes): those are what is checked.
            supported = bool(keys) and not missing
            score = max(score, 1.0 - len(missing) / len(keys)) if keys else score
        else:
            supported = not missing and (overlap >= self._min_overlap or (similarity or 0.0) >= self._min_similarity)
        if missing:
            score *= 0.5
        return SentenceSupport(
            sentence=text,
            supported=supported,
            score=round(min(max(score, 0.0), 1.0), 3),
            overlap=round(overlap, 3),
            similarity=None if similarity is None else round(similarity, 3),
            missing=missing,
            sources=sources,
        )

    def _similarities(self, claims: list[tuple[str, list[int]]], hits: list[Hit]) -> list[float | None]:
        if self._embed is None:
            return [None] * len(claims)
        needed = sorted({n for _, sources in claims for n in sources})
        units = {n: split_sentences(hits[n - 1].chunk.text) or [hits[n - 1].chunk.text] for n in needed}
        flat = [(n, unit) for n in needed for unit in units[n]]
        vectors = _unit(self._embed([text for text, _ in claims] + [unit for _, unit in flat]))
        claim_vectors, unit_vectors = vectors[: len(claims)], vectors[len(claims) :]
        owners = np.array([n for n, _ in flat])
        result: list[float | None] = []
        for vector, (_, sources) in zip(claim_vectors, claims, strict=True):
            mask = np.isin(owners, sources)
            result.append(float((unit_vectors[mask] @ vector).max()) if mask.any() else None)
        return result


def key_terms(sentence: str) -> list[str]:
    """Numbers, and capitalised words other than the sentence's first word (a possessive 's dropped):
    the facts a small change turns false."""
    names = [_POSSESSIVE.sub("", m.group(0)) for m in _NAME.finditer(sentence) if m.start() > 0]
    numbers = [m.group(0).rstrip(".,") for m in _NUMBER.finditer(sentence)]
    return list(dict.fromkeys(t for t in [*numbers, *names] if tokenize(t)))


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen \
seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SPELLED = re.compile(
    rf"\b(?:({'|'.join(_TENS)})(?:[\s-]({'|'.join(_UNITS[1:10])}))?|({'|'.join(_UNITS)}))\b", re.IGNORECASE
)


def spelled_numbers(text: str) -> set[str]:
    """The numbers a text spells out, as digits ("eleven" → "11", "forty-two" → "42"): a sentence that
    writes 11 is backed by a source that says eleven."""
    found: set[str] = set()
    for match in _SPELLED.finditer(text):
        tens, unit, alone = (g.lower() if g else None for g in match.groups())
        if alone:
            found.add(str(_UNITS.index(alone)))
        elif tens:
            found.add(str(20 + 10 * _TENS.index(tens) + (_UNITS.index(unit) if unit else 0)))
    return found


def _terms(text: str) -> set[str]:
    """The BM25 tokenizer's terms, with possessives dropped first ("Norman's" → "Norman")."""
    return set(tokenize(_POSSESSIVE_IN_TEXT.sub(r"\1", text)))


def _present(term: str, available: set[str], figures: set[str], source_text: str) -> bool:
    """A number must occur among the source's `figures` (its terms without commas) as it is, its
    commas aside ("1,200" is backed by "1200" and the reverse; "4,16" and "10.000,00", decimal commas,
    by themselves). A name's words may differ in their ending ("Europe" is backed by "European",
    "Norman" by "Normans"): a stem of four letters or more that begins a source term, or that a source
    term begins, counts. A name written in the source as it is, between non-letters, is there whatever
    the tokenizer made of its surroundings ("P" and "N" of "(P/N)", which it keeps as one term)."""
    if term[0].isdigit():
        return term.replace(",", "") in figures
    if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", source_text):
        return True
    for word in tokenize(term):
        if word in available:
            continue
        if len(word) < 4 or not any(
            len(other) >= 4 and (other.startswith(word) or word.startswith(other)) for other in available
        ):
            return False
    return True


# Words that negate, in the app's languages: a sentence that says what is not so is held only by its
# sources' words ("The Walmart store was not closed" over a row that says it closed).
_NEGATION = re.compile(
    r"(?:\b(?:not|no|never|none|nothing|neither|nor|cannot|ne|pas|jamais|aucun\w*|rien|nicht|kein\w*|nie|niemals|"
    r"nunca|nada|ningun\w*|ningún|não|nao|nem|nenhum\w*)\b|n't\b)",
    re.IGNORECASE,
)


def _restates(text: str, keys: list[str], asked: str, available: set[str], figures: set[str], source_text: str) -> bool:
    """A sentence may take its ordinary words from the question `asked`: one of its figures or names is
    not in the question (it states what was asked for), every name and figure of the question is in
    its sources (they are about what was asked: not "The accident resulted in 157 fatalities" over a
    passage on another accident than the one the question names), and it negates nothing.
    `available`, `figures`: the sources' terms and figures, as `_judge` found them."""
    asked_terms = _terms(asked)
    asked_figures = {term.replace(",", "") for term in asked_terms}
    return (
        any(not _present(key, asked_terms, asked_figures, asked) for key in keys)
        and all(_present(key, available, figures, source_text) for key in key_terms(asked))
        and not _NEGATION.search(text)
    )


def confidence(support: list[SentenceSupport]) -> float | None:
    """The answer's support as one number: sentence scores weighted by their number of terms."""
    if not support:
        return None
    weights = [len(_terms(s.sentence)) for s in support]
    return round(sum(w * s.score for w, s in zip(weights, support, strict=True)) / sum(weights), 3)


def _unit(vectors: list[list[float]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    return array / (np.linalg.norm(array, axis=1, keepdims=True) + 1e-12)
