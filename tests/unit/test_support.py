"""The per-sentence support check: which sources a sentence is checked against, what makes it
unsupported, and the confidence score."""

from __future__ import annotations

import pytest

from core.schemas import Hit, SentenceSupport
from core.settings import Settings, get_settings
from providers.embedder import Embedder
from rag.citations import CitationRules, resolve_citations
from rag.support import Embed, SupportChecker, confidence, key_terms
from tests.unit.test_citations import _hit

RULES = CitationRules.from_settings(Settings())

HITS = [
    _hit(1, "The warehouse employs 640 people. It opened in 1998 in Northgate.", page=3),
    _hit(2, "Westland | 7.35 million | 8.15 million", page=2),
    _hit(3, "Forklift operators complete a two-day certification before their first shift."),
]
DEFAULTS = get_settings()
LEXICAL = SupportChecker(
    None, DEFAULTS.support_min_term_share, DEFAULTS.support_min_similarity, DEFAULTS.support_min_terms
)


def check(checker: SupportChecker, answer: str, hits: list[Hit] = HITS) -> list[SentenceSupport]:
    text, citations = resolve_citations(answer, hits, RULES)
    return checker.check(text, citations, hits)


def test_a_sentence_is_checked_against_the_sources_it_cites() -> None:
    [staff, revenue] = check(LEXICAL, "The warehouse employs 640 people [1]. Westland made 8.15 million [2].")
    assert staff.supported and staff.sources == [1] and staff.overlap == 1.0 and staff.missing == []
    assert revenue.supported and revenue.sources == [2]
    # The right fact with the wrong marker: resolve_citations moves the marker to the source holding
    # the figure, so the sentence is checked against that one.
    [moved] = check(LEXICAL, "Westland made 8.15 million [1].")
    assert moved.supported and moved.sources == [2]
    # A sentence is checked against the source it names, not against all of them.
    text, citations = resolve_citations("Westland made 8.15 million [2].", HITS, RULES)
    [wrong] = LEXICAL.check(text.replace("[2]", "[1]"), citations, HITS)
    assert not wrong.supported and wrong.sources == [1] and "8.15" in wrong.missing


def test_a_changed_figure_or_name_is_unsupported_even_with_high_overlap() -> None:
    [figure] = check(LEXICAL, "The warehouse employs 650 people [1].")
    assert not figure.supported and figure.missing == ["650"] and figure.overlap >= DEFAULTS.support_min_term_share
    [name] = check(LEXICAL, "It opened in 1998 in Southport [1].")
    assert not name.supported and name.missing == ["Southport"]
    assert figure.score < DEFAULTS.low_confidence_threshold and name.score < DEFAULTS.low_confidence_threshold  # halved


def test_unmarked_sentences_use_the_cited_sources_and_an_uncited_answer_uses_all() -> None:
    answer = "Operators need a two-day certification [3]. They complete it before their first shift."
    first, second = check(LEXICAL, answer)
    assert first.sources == [3] and second.sources == [3] and second.supported
    [uncited] = LEXICAL.check("Operators complete a two-day certification.", [], HITS)
    assert uncited.sources == [1, 2, 3] and uncited.supported


def test_short_sentences_and_answers_without_sources_are_not_checked() -> None:
    assert LEXICAL.check("Yes. [1]", [], HITS) == []
    assert LEXICAL.check("The warehouse employs 640 people.", [], []) == []
    assert confidence([]) is None


def test_confidence_weights_sentences_by_their_terms() -> None:
    support = check(LEXICAL, "The warehouse employs 640 people [1]. The warehouse also runs a large bakery [1].")
    assert [s.supported for s in support] == [True, False]
    score = confidence(support)
    assert score is not None and support[1].score < score < support[0].score


def test_key_terms_are_numbers_and_names_after_the_first_word() -> None:
    assert key_terms("The Normans reached Sicily in 1061, with 8.15 million coins.") == [
        "1061",
        "8.15",
        "Normans",
        "Sicily",
    ]


def test_initials_and_codes_are_one_key_term_each() -> None:
    # "U.S." is not the name "U", nor "P12.1.2" the name "P12" and the number "12.1.2": the tokenizer
    # keeps both whole, so split they were missing from every source that holds them.
    assert key_terms("It affects 73 airplanes of U.S. registry and needs OPS P12.1.2.") == [
        "73",
        "U.S.",
        "OPS",
        "P12.1.2",
    ]
    faa = [_hit(1, "The FAA estimates that this AD affects 73 airplanes of U.S. registry. Install P12.1.2 first.")]
    [held] = check(LEXICAL, "This AD affects 73 airplanes of U.S. registry [1].", faa)
    assert held.supported and held.missing == []
    [code] = check(LEXICAL, "Version P12.1.2 has to be installed first [1].", faa)
    assert code.supported
    [changed] = check(LEXICAL, "Version P12.1.3 has to be installed first [1].", faa)
    assert not changed.supported and changed.missing == ["P12.1.3"]


def test_a_name_written_as_it_is_in_a_compound_of_the_source_is_held() -> None:
    # The tokenizer keeps "(P/N)" as the one term "p/n"; the sentence's names "P" and "N" stand in it.
    part = [_hit(1, "Install the valve, part number (P/N) 88–QX–12, on pump A and pump B.")]
    [held] = check(LEXICAL, "Install the valve with part number (P/N) 88–QX–12 on pump A and pump B [1].", part)
    assert held.supported and held.missing == []
    [other] = check(LEXICAL, "Install the valve with part number (P/N) 88–QX–12 on pump C [1].", part)
    assert not other.supported and other.missing == ["C"]


@pytest.fixture(scope="module")
def embed() -> Embed:
    return Embedder(get_settings()).embed


def test_the_embedding_signal_accepts_a_paraphrase_the_words_miss(embed: Embed) -> None:
    checker = SupportChecker(
        embed, DEFAULTS.support_min_term_share, DEFAULTS.support_min_similarity, DEFAULTS.support_min_terms
    )
    [paraphrase] = check(checker, "Forklift drivers are certified in a two-day course before they start [3].")
    assert paraphrase.overlap < DEFAULTS.support_min_term_share
    assert paraphrase.similarity is not None and paraphrase.similarity >= DEFAULTS.support_min_similarity
    assert paraphrase.supported
    [unrelated] = check(checker, "The cafeteria serves vegetarian lunches every Tuesday [3].")
    assert not unrelated.supported and unrelated.similarity is not None and unrelated.similarity < 0.5


def test_names_match_across_word_endings_and_possessives() -> None:
    hits = [_hit(1, "Western European control of Cyprus lasted 380 years. The Normans exported horsemen.")]
    backed = ["Western Europe controlled Cyprus for 380 years [1].", "The Norman's exports were horsemen [1]."]
    for sentence in backed:
        [support] = check(LEXICAL, sentence, hits)
        assert support.missing == [] and support.supported, support
    [wrong] = check(LEXICAL, "Western Europe controlled Crete for 380 years [1].", hits)
    assert wrong.missing == ["Crete"] and not wrong.supported


def test_sources_in_another_language_are_checked_by_their_figures_and_names() -> None:
    minutes = [_hit(1, "La séance est levée à 20 h 15. Le projet de Montréal coûte 1 200 000 $.", page=2)]
    minutes[0].chunk.lang = "fr"
    text, citations = resolve_citations("The Montréal project costs 1 200 000 dollars [1].", minutes, RULES)
    [held] = LEXICAL.check(text, citations, minutes, lang="en")
    assert held.supported, "its figure and its name are in the French source"
    text, citations = resolve_citations("The Québec project costs 900 000 dollars [1].", minutes, RULES)
    [invented] = LEXICAL.check(text, citations, minutes, lang="en")
    assert not invented.supported and invented.missing
    text, citations = resolve_citations("The meeting ended in the evening [1].", minutes, RULES)
    [unchecked] = LEXICAL.check(text, citations, minutes, lang="en")
    assert not unchecked.supported, "no figure or name to check it by: not held"


def test_a_figure_written_with_a_decimal_comma_is_found_as_written() -> None:
    hits = [
        _hit(1, "- Bandeira vermelha patamar 1: R$ 4,16 a cada 100 kWh consumidos"),
        _hit(2, "SARRABAYROUSE DIEGO 24.662.899 09/10/2013 EFECTIVO $ 10.000,00"),
    ]
    for sentence in ["A bandeira vermelha patamar 1 custa R$ 4,16 por 100 kWh [1].", "DIEGO aportó $ 10.000,00 [2]."]:
        [support] = check(LEXICAL, sentence, hits)
        assert support.missing == [], support
    [changed] = check(LEXICAL, "A bandeira vermelha patamar 1 custa R$ 4,61 por 100 kWh [1].", hits)
    assert changed.missing == ["4,61"] and not changed.supported


def test_a_name_of_the_passages_document_or_section_backs_a_sentence() -> None:
    row = _hit(1, "Company: Paris Precision, LLC | City: Paso Robles | No. Of: 12")
    row.chunk.title, row.chunk.heading_path = "WARN Report", ["WARN Report"]
    [held] = check(LEXICAL, "The WARN notice for Paso Robles was filed by Paris Precision, LLC [1].", [row])
    assert held.missing == [] and held.supported, held
    # A name neither the passage nor its document's headings hold is still missing.
    [invented] = check(LEXICAL, "The WARN notice for Fresno was filed by Paris Precision, LLC [1].", [row])
    assert invented.missing == ["Fresno"] and not invented.supported


SECTIONS = [
    _hit(1, "Chapter 2 explains how vectors and matrices are created and indexed.", page=4),
    _hit(2, "Chapter 5 shows how statistical models are fitted to data frames.", page=40),
    _hit(3, "Chapter 7 covers plotting and the graphics parameters.", page=70),
]


def test_a_summary_sentence_no_one_excerpt_holds_is_held_by_the_excerpts_it_joins() -> None:
    summary = "The manual explains vectors, matrices, statistical models and plotting [2]."
    [unheld] = check(LEXICAL, summary, SECTIONS)
    assert not unheld.supported and unheld.sources == [2], "the one excerpt it cites does not hold it"
    assert LEXICAL.backing(unheld, SECTIONS) is None
    joint = LEXICAL.joint_backing(unheld, SECTIONS, most=3)
    assert joint is not None and joint.supported and joint.sources == [1, 2, 3]
    assert LEXICAL.joint_backing(unheld, SECTIONS, most=1) is None, "one excerpt is not a joint backing"


def test_a_joined_sentence_with_a_name_or_figure_no_excerpt_has_stays_unheld() -> None:
    for invented in (
        "The manual explains vectors, matrices, statistical models and plotting in Fortran [1].",
        "The manual explains vectors, matrices, statistical models and plotting in 12 chapters [1].",
        "The book includes exercises and quizzes to help readers practise [1].",
    ):
        [unheld] = check(LEXICAL, invented, SECTIONS)
        assert LEXICAL.joint_backing(unheld, SECTIONS, most=3) is None, invented


ROW = [_hit(1, "Company: Twitter, Inc. | City: San Francisco | No. Of: 240 | Layoff/Closure: Layoff Permanent")]
RESTATING = SupportChecker(
    None, DEFAULTS.support_min_term_share, DEFAULTS.support_min_similarity, DEFAULTS.support_min_terms, True
)


def test_with_the_option_a_sentence_may_restate_the_questions_words_around_the_sources_facts() -> None:
    asked = "twitter layoffs - which city and how many people?"
    answer = "Twitter laid off 240 people in San Francisco."
    [plain] = LEXICAL.check(answer, [], ROW, asked=asked)
    assert not plain.supported and plain.missing == []  # "laid off", "people": the question's words
    [restated] = RESTATING.check(answer, [], ROW, asked=asked)
    assert restated.supported
    # Not when a figure or name of the sentence is missing from its sources, ...
    [changed] = RESTATING.check("Twitter laid off 250 people in San Francisco.", [], ROW, asked=asked)
    assert not changed.supported and changed.missing == ["250"]
    # ... nor when its figures and names are all the question's (it states nothing that was asked for),
    [echo] = RESTATING.check("Twitter had layoffs of people in San Francisco.", [], ROW, asked=f"{asked} San Francisco")
    assert not echo.supported
    # ... nor when the question names what its sources do not (another company than the row's),
    [other] = RESTATING.check(answer, [], ROW, asked="How many people did Oracle lay off in San Francisco?")
    assert not other.supported
    # ... nor when it negates (a stop word the terms do not see).
    asked = "how many people did twitter lay off in san francisco?"
    [said] = RESTATING.check("Twitter did lay off 240 people in San Francisco.", [], ROW, asked=asked)
    [negated] = RESTATING.check("Twitter did not lay off 240 people in San Francisco.", [], ROW, asked=asked)
    assert said.supported and not negated.supported
