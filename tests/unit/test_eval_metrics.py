"""Our evaluation metrics on hand-made cases: perfect, empty and partial."""

from __future__ import annotations

import math

import pytest

from core.schemas import Chunk
from eval import metrics
from eval.dataset import GoldEvidence
from tests.chunks import text_chunk


def chunk(text: str, source: str = "doc.md", page: int = 0, start: int = 0, cid: str | None = None) -> Chunk:
    return text_chunk(text, chunk_id=cid or f"{source}-{page}-{start}", source=source, page=page, char_start=start)


GOLD = [GoldEvidence(source="doc.md", text="Setup takes about 10 minutes.")]
RIGHT = chunk("Intro.\nSetup takes   about 10\nminutes. Then pair devices.", start=0)
WRONG = chunk("The warranty lasts two years.", start=100)
OTHER_DOC = chunk("Setup takes about 10 minutes.", source="other.md")


def test_answer_normalization_drops_markers_case_punctuation_and_articles() -> None:
    assert metrics.normalize_answer("The hub costs 4.99 EUR [1][2].") == "hub costs 4 99 eur"
    assert metrics.strip_markers("Yes [1, 2]. No [3]") == "Yes . No"


@pytest.mark.parametrize(
    ("prediction", "references", "em", "f1"),
    [
        ("about 10 minutes", ["about 10 minutes"], 1.0, 1.0),  # perfect
        ("", ["about 10 minutes"], 0.0, 0.0),  # empty answer
        ("It takes about 10 minutes [1].", ["about 10 minutes"], 0.0, 2 * 0.6 * 1.0 / 1.6),  # partial
        ("ten", ["10 minutes", "ten minutes"], 0.0, 2 * 1.0 * 0.5 / 1.5),  # best of several references
    ],
)
def test_exact_match_and_token_f1(prediction: str, references: list[str], em: float, f1: float) -> None:
    assert metrics.exact_match(prediction, references) == em
    assert metrics.token_f1(prediction, references) == pytest.approx(f1)


def test_answer_metrics_do_not_apply_without_references() -> None:
    assert metrics.exact_match("anything", []) is None
    assert metrics.token_f1("anything", []) is None
    assert metrics.contains_answer("anything", []) is None


def test_contains_answer_needs_whole_words() -> None:
    assert metrics.contains_answer("Setup takes about 10 minutes [1].", ["about 10 minutes"]) == 1.0
    assert metrics.contains_answer("It costs 64 EUR.", ["6"]) == 0.0  # not a substring of a number
    assert metrics.contains_answer("", ["64"]) == 0.0


def test_evidence_matching_ignores_whitespace_and_checks_source_page_and_spans() -> None:
    assert metrics.has_evidence(RIGHT, GOLD[0])
    assert not metrics.has_evidence(WRONG, GOLD[0])
    assert not metrics.has_evidence(OTHER_DOC, GOLD[0])
    on_page = GoldEvidence(source="doc.md", page=2, text="warranty")
    assert not metrics.has_evidence(WRONG, on_page)  # WRONG is page 0
    assert metrics.has_evidence(chunk("The warranty.", page=2), on_page)
    # Character spans: any one alternative wholly inside the chunk is enough; straddling is not.
    spans = GoldEvidence(source="doc.md", char_spans=[(90, 105), (110, 120)])
    assert metrics.has_evidence(WRONG, spans)  # WRONG covers 100..129, so (110, 120) is inside
    assert not metrics.has_evidence(WRONG, GoldEvidence(source="doc.md", char_spans=[(90, 105)]))


def test_retrieval_metrics_perfect_partial_and_missing() -> None:
    assert metrics.hit_at_k([RIGHT, WRONG], GOLD, k=1) == 1.0
    assert metrics.reciprocal_rank([RIGHT, WRONG], GOLD) == 1.0
    assert metrics.hit_at_k([WRONG, RIGHT], GOLD, k=1) == 0.0
    assert metrics.hit_at_k([WRONG, RIGHT], GOLD, k=2) == 1.0
    assert metrics.reciprocal_rank([WRONG, OTHER_DOC, RIGHT], GOLD) == pytest.approx(1 / 3)
    assert metrics.reciprocal_rank([WRONG], GOLD) == 0.0
    assert metrics.reciprocal_rank([], GOLD) == 0.0
    assert metrics.hit_at_k([RIGHT], [], k=4) is None  # no gold: does not apply


def test_evidence_recall_counts_each_hop() -> None:
    two_hops = [*GOLD, GoldEvidence(source="doc.md", text="two years")]
    assert metrics.evidence_recall([RIGHT, WRONG], two_hops) == 1.0
    assert metrics.evidence_recall([RIGHT], two_hops) == 0.5
    assert metrics.evidence_recall([], two_hops) == 0.0


def test_citation_precision_and_recall() -> None:
    assert metrics.citation_precision([RIGHT], GOLD, ["about 10 minutes"]) == 1.0
    assert metrics.citation_precision([RIGHT, WRONG], GOLD, ["about 10 minutes"]) == 0.5
    assert metrics.citation_precision([], GOLD, ["about 10 minutes"]) is None  # nothing cited
    # Without gold passages, a cited chunk supports the answer when it holds a reference.
    assert metrics.citation_precision([WRONG], [], ["two years"]) == 1.0
    assert metrics.citation_precision([WRONG], [], ["ten years"]) == 0.0
    assert metrics.citation_recall([RIGHT], GOLD) == 1.0
    assert metrics.citation_recall([], GOLD) == 0.0  # answered but cited nothing
    assert metrics.citation_recall([RIGHT], []) is None


def test_refusal_metrics_apply_to_one_kind_of_question_each() -> None:
    assert metrics.refusal_correct(answerable=False, refused=True, cited=0) == 1.0
    assert metrics.refusal_correct(answerable=False, refused=True, cited=1) == 0.0  # refused yet cited
    assert metrics.refusal_correct(answerable=False, refused=False, cited=0) == 0.0
    assert metrics.refusal_correct(answerable=True, refused=True, cited=0) is None
    assert metrics.false_refusal(answerable=True, refused=True) == 1.0
    assert metrics.false_refusal(answerable=True, refused=False) == 0.0
    assert metrics.false_refusal(answerable=False, refused=True) is None


def test_aggregation_skips_none_and_nan() -> None:
    assert metrics.mean([1.0, None, math.nan, 0.0]) == 0.5
    assert metrics.mean([None, math.nan]) is None
    assert metrics.percentile([10.0, 20.0, None, 30.0, 40.0], 50) == 25.0
    assert metrics.percentile([1.0, 2.0, 3.0, 4.0, 100.0], 95) == pytest.approx(80.8)
    assert metrics.percentile([], 95) is None


def test_citation_holds_reference_finds_the_answer_anywhere_cited() -> None:
    elsewhere = chunk("Later his troops were led by Guy de Lusignan.", start=900)
    unrelated = chunk("The island was conquered by 1 June.", start=1200)
    assert metrics.citation_holds_reference([unrelated, elsewhere], ["Guy de Lusignan"]) == 1.0
    assert metrics.citation_holds_reference([unrelated], ["Guy de Lusignan"]) == 0.0
    assert metrics.citation_holds_reference([], ["Guy de Lusignan"]) == 0.0
    assert metrics.citation_holds_reference([elsewhere], ["Lusign"]) == 0.0  # whole words only
    assert metrics.citation_holds_reference([elsewhere], []) is None
