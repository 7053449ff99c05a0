from __future__ import annotations

from core.schemas import Hit
from core.settings import Settings
from rag.citations import CitationRules, best_snippet, is_refusal, recite, resolve_citations
from rag.messages import REFUSAL_TEXT
from tests.chunks import text_hit

RULES = CitationRules.from_settings(Settings())


def _hit(n: int, text: str, page: int = 1) -> Hit:
    return text_hit(text, chunk_id=f"c{n}", source=f"file{n}.pdf", page=page, index=n)


HITS = [
    _hit(1, "The warehouse employs 640 people. It opened in 1998.", page=3),
    _hit(2, "Westland | 7.35 million | 8.15 million", page=2),
]


def test_valid_markers_become_citations_in_order() -> None:
    text, citations = resolve_citations("Westland made 8.15 million [2]. Staff is 640 [1].", HITS, RULES)
    assert text == "Westland made 8.15 million [2]. Staff is 640 [1]."
    assert [(c.marker, c.source, c.page, c.method) for c in citations] == [
        (2, "file2.pdf", 2, "marker"),
        (1, "file1.pdf", 3, "marker"),
    ]
    assert citations[1].snippet == "The warehouse employs 640 people."


def test_markers_to_sources_not_given_are_removed() -> None:
    text, citations = resolve_citations("Staff is 640 [1][7]. Founded long ago [9].", HITS, RULES)
    assert "[7]" not in text and "[9]" not in text
    assert text == "Staff is 640 [1]. Founded long ago."
    assert [c.marker for c in citations] == [1]


def test_grouped_markers_are_split_and_deduplicated() -> None:
    text, citations = resolve_citations("Both hold [1, 2]. Again [2].", HITS, RULES)
    assert text.startswith("Both hold [1][2].")
    assert [c.marker for c in citations] == [1, 2]


def test_uncited_answer_is_attributed_by_support_and_marked() -> None:
    text, citations = resolve_citations("The Westland Q2 figure was 8.15 million.", HITS, RULES)
    assert [(c.marker, c.method) for c in citations] == [(2, "support")]
    assert text == "The Westland Q2 figure was 8.15 million [2]."


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before_it() -> None:
    # The small models write "… 640 people. [1]": the marker is that sentence's, not a sentence of its own,
    # and its snippet is the passage's sentence that holds the claim, not the passage's first line.
    hits = [_hit(1, "# Staff\nThe site opened in 1998. The warehouse employs 640 people."), HITS[1]]
    text, citations = resolve_citations(
        "The warehouse employs 640 people. [1] Westland made 8.15 million. [2]", hits, RULES, correct=False
    )
    assert text == "The warehouse employs 640 people [1]. Westland made 8.15 million [2]."
    assert [(c.marker, c.method, c.snippet) for c in citations] == [
        (1, "marker", "The warehouse employs 640 people."),
        (2, "marker", "Westland | 7.35 million | 8.15 million"),
    ]


def test_uncited_unsupported_answer_gets_no_citation() -> None:
    text, citations = resolve_citations("Paris is the capital of France.", HITS, RULES)
    assert citations == []
    assert text == "Paris is the capital of France."


def test_refusal_detection() -> None:
    assert is_refusal(REFUSAL_TEXT)
    assert is_refusal("I do not have enough information in the uploaded documents to answer this question.")
    assert is_refusal("  [1] ")
    assert not is_refusal("The warehouse employs 640 people [1].")
    # Other wordings small models use, when nothing is cited.
    assert is_refusal("The sources do not contain information about the CEO's salary.")
    assert is_refusal("The provided documents don't mention a warranty.")
    assert is_refusal("There is no information about that in the sources.")
    assert is_refusal("I cannot answer this from the documents.")
    # A partial answer that cites a source is an answer.
    assert not is_refusal("The sources do not state the year, but the warehouse employs 640 people [1].")


def test_best_snippet_picks_the_supporting_row() -> None:
    assert best_snippet("North | 4.2\nWestland | 8.15", "Westland had 8.15", RULES.snippet_chars) == "Westland | 8.15"


def test_sentences_span_pdf_line_breaks_but_table_rows_stay_apart() -> None:
    from rag.citations import split_sentences

    text = "Forklift operators\ncomplete a two-day certification. Then they\nwork.\nA | 1 | 2\nB | 3 | 4"
    assert split_sentences(text) == [
        "Forklift operators complete a two-day certification.",
        "Then they work.",
        "A | 1 | 2",
        "B | 3 | 4",
    ]


PRICES = [
    _hit(1, "Returns are accepted within 30 days of delivery. Opened items get a 15% restocking fee.", page=1),
    _hit(2, "Nimbus Home Hub | 99 EUR\nNimbus Sensor Pack | 49 EUR", page=2),
    _hit(3, "The hub supports Zigbee and Thread devices and needs a 2.4 GHz network.", page=1),
]


def test_a_marker_whose_source_lacks_the_figure_moves_to_the_source_that_has_it() -> None:
    text, citations = resolve_citations("The Nimbus Home Hub costs 99 EUR [1].", PRICES, RULES)
    assert text == "The Nimbus Home Hub costs 99 EUR [2]."
    assert [(c.marker, c.method, c.cited_as, c.page) for c in citations] == [(2, "corrected", 1, 2)]
    assert "99 EUR" in citations[0].snippet


def test_a_marker_whose_source_lacks_the_words_moves_and_a_right_one_stays() -> None:
    answer = "The hub supports Zigbee and Thread devices [1]. Returns are accepted within 30 days [1]."
    text, citations = resolve_citations(answer, PRICES, RULES)
    assert text == "The hub supports Zigbee and Thread devices [3]. Returns are accepted within 30 days [1]."
    assert [(c.marker, c.method) for c in citations] == [(3, "corrected"), (1, "marker")]


def test_a_marker_is_kept_when_no_other_source_does_better() -> None:
    answer = "Opened items get a restocking fee [1]. The fee for a 120 EUR item is 18 EUR [1]."
    text, citations = resolve_citations(answer, PRICES, RULES)  # a computed figure no source holds
    assert text == answer
    assert [(c.marker, c.method) for c in citations] == [(1, "marker")]


def test_a_citation_already_corrected_keeps_the_number_the_model_wrote_when_another_sentence_moves() -> None:
    """resolve_citations moved the first sentence's [2] to [1] (cited_as 2); the support check then
    moves the second sentence to [1] as well: the first sentence's citation still says what the model
    wrote."""
    hits = [
        _hit(1, "The warehouse employs 640 people. It opened in 1998.", page=3),
        _hit(2, "Westland | 7.35 million | 8.15 million", page=2),
    ]
    text, citations = resolve_citations("The warehouse employs 640 people [2]. It opened in 1998 [2].", hits, RULES)
    first = next(c for c in citations if c.marker == 1)
    assert (first.method, first.cited_as) == ("corrected", 2)
    moved_text, moved = recite(text, citations, {"It opened in 1998.": [1]}, hits, RULES)
    assert moved_text.count("[1]") == 2
    assert [(c.marker, c.method, c.cited_as) for c in moved] == [(1, "corrected", 2)]
