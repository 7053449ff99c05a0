"""Evidence excerpts: sentence spans with offsets, the best sentences within a token budget, table
headers with their rows, short notes whole."""

from __future__ import annotations

from pathlib import Path

from core.schemas import Hit, MemoryFacts, Retrieval
from core.settings import get_settings
from core.text import estimate_tokens
from rag.citations import split_sentences
from rag.evidence import EvidencePicker, sentence_spans, term_coverage
from rag.navigation import is_navigation
from rag.stages import SelectEvidence
from tests.chunks import text_hit
from tests.pipeline_parts import word_vectors

PROSE = (
    "The harbour opened in 1871. Its first master was Ada Lind. Ships paid 3.5 crowns a day. "
    "The lighthouse was added later. Storms closed it in 1903. The museum now holds its logbooks."
)
TABLE = "Revenue by region:\nRegion | Q1 | Q2\nNorth | 4.2 | 4.9\nSouth | 3.1 | 3.6\nWestland | 7.35 | 8.15"
HEADER = 4


def hit(text: str, char_start: int = 100) -> Hit:
    return text_hit(text, source="s.pdf", page=2, char_start=char_start)


def picker(budget: int, min_chunk_tokens: int = 0, neighbour_weight: float = 0.0) -> EvidencePicker:
    return EvidencePicker(
        word_vectors,
        budget,
        min_chunk_tokens,
        lexical_weight=1.0,
        header_tokens=HEADER,
        neighbour_weight=neighbour_weight,
    )


def test_sentence_spans_cover_sentences_and_keep_numbers_whole() -> None:
    spans = [PROSE[s.start : s.end] for s in sentence_spans(PROSE)]
    assert spans[2] == "Ships paid 3.5 crowns a day." and len(spans) == 6
    rows = [TABLE[s.start : s.end] for s in sentence_spans(TABLE)]
    assert rows[0] == "Revenue by region:" and rows[-1] == "Westland | 7.35 | 8.15"


def test_the_best_sentence_alone_fits_a_small_budget_with_its_page_offsets() -> None:
    best = "Its first master was Ada Lind."
    [excerpt] = picker(HEADER + estimate_tokens(best)).pick("Who was the first master, Ada Lind?", [hit(PROSE)])
    assert excerpt.chunk.text == best
    assert excerpt.chunk.char_start == 100 + PROSE.index(best)
    assert excerpt.chunk.char_end == excerpt.chunk.char_start + len(best)


def test_the_budget_bounds_the_evidence_and_touching_sentences_merge() -> None:
    chosen = picker(40).pick("When did the harbour open and who was its first master?", [hit(PROSE)])
    assert sum(estimate_tokens(h.chunk.text) for h in chosen) + HEADER <= 40
    assert chosen[0].chunk.text.startswith("The harbour opened in 1871. Its first master was Ada Lind.")
    everything = picker(1000).pick("harbour", [hit(PROSE)])
    assert [h.chunk.text for h in everything] == [PROSE]


def test_the_best_sentence_goes_in_even_over_the_budget() -> None:
    [excerpt] = picker(1).pick("Storms closed it in 1903", [hit(PROSE)])
    assert excerpt.chunk.text == "Storms closed it in 1903."


def test_a_table_row_comes_with_the_table_header() -> None:
    [excerpt] = picker(HEADER + 12).pick("Westland 8.15", [hit(TABLE)])
    assert excerpt.chunk.text.startswith("Region | Q1 | Q2") and excerpt.chunk.text.endswith("Westland | 7.35 | 8.15")


def test_a_short_chunk_is_one_unit_and_an_unrelated_one_left_out() -> None:
    short, other = hit("Ada Lind was the first master."), hit("Storms closed it in 1903.")
    chosen = picker(HEADER + 10, min_chunk_tokens=100).pick("first master Ada Lind", [short, other])
    assert [h.chunk.text for h in chosen] == [short.chunk.text]


def test_term_coverage_weighs_rare_question_words_more() -> None:
    coverage = term_coverage("Ada Lind harbour", ["Ada Lind sailed.", "The harbour.", "The harbour and Ada."])
    assert coverage[0] > coverage[1] and coverage[2] > coverage[1]


def test_tables_of_contents_and_indexes_are_navigation_and_tables_are_not() -> None:
    toc = (
        "Table of Contents\nPreface . . . . . . . . . 1\n1 Introduction . . . . . . 2\n1.1 The R environment. . . . . 2"
    )
    index = "C\nc . . . . . . . . . 8, 11, 27, 30\ncbind. . . . . . . . 26\ncoef . . . . . . . . 58"
    spaced = "Contents\nIntroduction      1\nMethods      14\nResults      22\nDiscussion      xii"
    assert is_navigation(toc) and is_navigation(index) and is_navigation(spaced)
    assert not is_navigation(TABLE) and not is_navigation(PROSE)
    assert not is_navigation("Revenue rose to 12.\nCosts fell to 3.\nStaff grew by 40.\nThe plant opened in 1998.")
    # An index cut into chunks of a line or two by its long leaders: the dots are most of the text.
    leader = ". " * 30
    assert is_navigation(f"{leader}58") and is_navigation(f"{leader}37\nfor {leader}")
    assert is_navigation(f"coef {leader}58\ncoefficients{leader}58")
    assert not is_navigation("He paused.... Then he went on with the report about the harbour cranes.")
    assert not is_navigation("Wait . . . what? The figures were 1.2, 3.4 and 5.6 in the table.")


def test_a_list_number_stays_with_the_sentence_it_numbers() -> None:
    text = "2. Returning hardware\nUnopened hardware can be returned within 30 days. 3. Refunds are paid. IV) Last."
    spans = [text[s.start : s.end] for s in sentence_spans(text)]
    assert spans == [
        "2. Returning hardware\nUnopened hardware can be returned within 30 days.",
        "3. Refunds are paid.",
        "IV) Last.",
    ]


def test_the_sentence_after_a_match_ranks_with_it_when_the_neighbour_weight_is_set() -> None:
    text = "The Normans settled in Normandy. They were led by Rollo. The Normans spoke French. Normandy grew apples."
    question = "Who was the leader of the Normans who settled in Normandy?"
    budget = HEADER + estimate_tokens("The Normans settled in Normandy. They were led by Rollo.")
    alone = picker(budget).pick(question, [hit(text)])
    assert "Rollo" not in " ".join(h.chunk.text for h in alone)
    [excerpt] = picker(budget, neighbour_weight=0.8).pick(question, [hit(text)])
    assert excerpt.chunk.text == "The Normans settled in Normandy. They were led by Rollo."


def test_evidence_is_picked_from_the_candidates_below_the_top_k(tmp_path: Path) -> None:
    filler = [hit(f"Section {n} lists the harbour fees of {1900 + n}. Fees were paid monthly.") for n in range(4)]
    answer = hit("Ada Lind was appointed harbour master in 1871.")
    candidates = [*filler, answer]
    retrieval = Retrieval(
        query="q", hits=candidates[:2], candidates=candidates, bm25_weight=0.5, fusion="convex", reranker="none"
    )
    question = "Who was appointed harbour master?"

    def evidence(pool: int) -> str:
        settings = get_settings(home=tmp_path, evidence_candidates=pool, evidence_tokens=30)
        given = SelectEvidence(settings, word_vectors).run(question, question, retrieval, MemoryFacts())
        return " ".join(h.chunk.text for h in given)

    assert "Ada Lind" in evidence(8)
    assert "Ada Lind" not in evidence(2)


def test_an_abbreviation_or_initials_do_not_end_a_sentence() -> None:
    text = (
        "The Fairness in Musical Licensing Act (Pub. L. No. 105-298, Oct. 27, 1998) also adds a new section "
        "512. The U.S. Copyright Office agrees, see Fig. 3. Dr. Smith said so! It ends."
    )
    expected = [
        "The Fairness in Musical Licensing Act (Pub. L. No. 105-298, Oct. 27, 1998) also adds a new section 512.",
        "The U.S. Copyright Office agrees, see Fig. 3.",
        "Dr. Smith said so!",
        "It ends.",
    ]
    assert [text[s.start : s.end] for s in sentence_spans(text)] == expected
    assert split_sentences(text) == expected


def test_a_row_the_chunks_start_cut_off_is_not_given_and_whole_rows_are() -> None:
    rows = (
        "| City: Torrance | No. Of: 388 | Layoff/Closure: Layoff Permanent\n"
        "Notice Date: 01/20/2016 | Company: Highland Metals Inc. | City: San Jose | No. Of: 17 | Layoff/Closure: Shut\n"
        "Notice Date: 01/21/2016 | Company: Centrally Grown | City: Cambria | No. Of: 16 | Layoff/Closure: Shut"
    )
    given = " ".join(h.chunk.text for h in picker(1000).pick("How many employees in Torrance?", [hit(rows)]))
    assert "388" not in given and "Highland Metals" in given and "Centrally Grown" in given
    # A row whose empty cell was left out is whole, and stays: its labels are no suffix of the next's.
    sparse = rows.replace(
        "| City: Torrance | No. Of: 388 |", "Notice Date: 01/19/2016 | City: Torrance | No. Of: 3000 |"
    )
    given = " ".join(h.chunk.text for h in picker(1000).pick("How many employees in Torrance?", [hit(sparse)]))
    assert "Notice Date: 01/19/2016 | City: Torrance | No. Of: 3000" in given
