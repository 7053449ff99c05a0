"""Our own metrics: plain functions of an answer, its citations and the ranked chunks.

A metric that does not apply to a question (answer correctness on an out-of-scope question, citation
precision of an answer that cites nothing) is None, never 0, so it cannot drag an average down.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from core.schemas import Answer, Chunk
from eval.dataset import GoldEvidence
from ingestion.tables import without_labels
from rag.answer_format import UNCOVERED_OPENING
from rag.citations import split_sentences

_MARKER = re.compile(r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation + "“”‘’–—…", " "))


# ---- answers ------------------------------------------------------------------------------------


def strip_markers(text: str) -> str:
    """The answer without its [n] citation markers."""
    return " ".join(_MARKER.sub(" ", text).split())


def normalize_answer(text: str) -> str:
    """SQuAD's normalization: lower case, no punctuation, no articles, single spaces."""
    text = strip_markers(text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, references: Sequence[str]) -> float | None:
    """1.0 when the normalized answer equals a normalized reference; None without references."""
    if not references:
        return None
    answer = normalize_answer(prediction)
    return float(any(answer == normalize_answer(r) for r in references))


def token_f1(prediction: str, references: Sequence[str]) -> float | None:
    """SQuAD token F1 against the best-matching reference; None without references."""
    if not references:
        return None
    return max(_f1(normalize_answer(prediction).split(), normalize_answer(r).split()) for r in references)


def _f1(predicted: list[str], reference: list[str]) -> float:
    if not predicted or not reference:
        return float(predicted == reference)
    common = sum((Counter(predicted) & Counter(reference)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(reference)
    return 2 * precision * recall / (precision + recall)


def contains_answer(prediction: str, references: Sequence[str]) -> float | None:
    """1.0 when some normalized reference occurs, as whole words, in the normalized answer.

    A grounded assistant answers in sentences ("Setup takes about 10 minutes [1].") where SQuAD's
    exact match is 0 and F1 is diluted by the extra words; this says whether the answer is in there.
    """
    if not references:
        return None
    answer = f" {normalize_answer(prediction)} "
    return float(any(f" {normalize_answer(r)} " in answer for r in references if normalize_answer(r)))


# ---- evidence -----------------------------------------------------------------------------------


def normalize_passage(text: str) -> str:
    """Whitespace-insensitive, case-insensitive form for finding a gold passage in a chunk. Table rows
    are compared without their column names (ingestion/tables.py), as the gold passages of tables
    written before rows were labelled give them."""
    return " ".join(without_labels(text).split()).casefold()


def has_evidence(chunk: Chunk, evidence: GoldEvidence) -> bool:
    """The chunk is in the gold source (and page) and contains the passage or one whole span."""
    if chunk.source != evidence.source or (evidence.page is not None and chunk.page != evidence.page):
        return False
    if evidence.text and normalize_passage(evidence.text) not in normalize_passage(chunk.text):
        return False
    spans = evidence.char_spans
    return not spans or any(chunk.char_start <= start and end <= chunk.char_end for start, end in spans)


def is_relevant(chunk: Chunk, gold: Sequence[GoldEvidence]) -> bool:
    return any(has_evidence(chunk, evidence) for evidence in gold)


def hit_at_k(ranked: Sequence[Chunk], gold: Sequence[GoldEvidence], k: int) -> float | None:
    """1.0 when a gold chunk is among the first k; None without gold evidence."""
    if not gold:
        return None
    return float(any(is_relevant(chunk, gold) for chunk in ranked[:k]))


def reciprocal_rank(ranked: Sequence[Chunk], gold: Sequence[GoldEvidence]) -> float | None:
    """1 / rank of the first gold chunk in the ranking (0 when none is there); None without gold."""
    if not gold:
        return None
    for rank, chunk in enumerate(ranked, start=1):
        if is_relevant(chunk, gold):
            return 1.0 / rank
    return 0.0


def evidence_recall(chunks: Iterable[Chunk], gold: Sequence[GoldEvidence]) -> float | None:
    """Share of the gold items (all of a multi-hop question's) found in at least one of the chunks."""
    if not gold:
        return None
    chunks = list(chunks)
    return sum(any(has_evidence(c, evidence) for c in chunks) for evidence in gold) / len(gold)


# ---- citations ----------------------------------------------------------------------------------


def citation_precision(cited: Sequence[Chunk], gold: Sequence[GoldEvidence], references: Sequence[str]) -> float | None:
    """Share of cited chunks that support the answer: they hold a gold passage, or, for a question
    with no gold passage, a reference answer. None when nothing was cited or nothing is known."""
    if not cited or not (gold or references):
        return None
    return sum(_supports(chunk, gold, references) for chunk in cited) / len(cited)


def _supports(chunk: Chunk, gold: Sequence[GoldEvidence], references: Sequence[str]) -> bool:
    if gold:
        return is_relevant(chunk, gold)
    text = f" {normalize_answer(chunk.text)} "
    return any(f" {normalize_answer(r)} " in text for r in references if normalize_answer(r))


def citation_recall(cited: Sequence[Chunk], gold: Sequence[GoldEvidence]) -> float | None:
    """Share of the gold items that some cited chunk covers (0 when the answer cites nothing)."""
    return evidence_recall(cited, gold)


def citation_holds_reference(cited: Sequence[Chunk], references: Sequence[str]) -> float | None:
    """1.0 when some cited excerpt holds a reference answer as whole words. SQuAD marks one occurrence
    of the answer as gold; an excerpt that states it elsewhere in the document supports the answer as
    well, and this tells those apart from a citation of a passage without it. None without references."""
    if not references:
        return None
    return float(any(_supports(chunk, [], references) for chunk in cited))


def model_cited_share(answer: Answer) -> float | None:
    """Share of the answer's sentences that carry a marker the model wrote itself (not one attributed
    by word overlap or moved by the correction). None for an answer without sentences."""
    sentences = [s for s in split_sentences(answer.answer) if s.strip() and not s.startswith(UNCOVERED_OPENING)]
    if not sentences:
        return None
    own = {c.marker for c in answer.citations if c.method == "marker"}
    carried = sum(any(int(n) in own for n in re.findall(r"\[(\d+)\]", s)) for s in sentences)
    return carried / len(sentences)


# ---- refusals -----------------------------------------------------------------------------------


def refusal_correct(answerable: bool, refused: bool, cited: int) -> float | None:
    """Out-of-scope questions: 1.0 when refused with no citations. None for answerable questions."""
    if answerable:
        return None
    return float(refused and cited == 0)


def false_refusal(answerable: bool, refused: bool) -> float | None:
    """Answerable questions: 1.0 when the assistant refused anyway. None for out-of-scope ones."""
    return float(refused) if answerable else None


# ---- aggregation --------------------------------------------------------------------------------


def finite(values: Iterable[float | None]) -> list[float]:
    """The values that are numbers (None and NaN dropped)."""
    return [v for v in values if v is not None and not math.isnan(v)]


def mean(values: Iterable[float | None]) -> float | None:
    numbers = finite(values)
    return sum(numbers) / len(numbers) if numbers else None


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default), None for no values."""
    numbers = finite(values)
    return float(np.percentile(numbers, q)) if numbers else None
