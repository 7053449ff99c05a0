from __future__ import annotations

import pytest

from core.text import tokenize


@pytest.mark.parametrize(
    ("document", "query"),
    [
        ("Revenue reached $50M this year", "50M revenue"),
        ("Results for Q4 2025 are final", "q4 2025"),
        ("Upgrade to v2.3 before March", "upgrade 2.3"),
        ("The CAFÉ, in Zürich!", "cafe zurich"),
        ("Shipped 1,000 units", "1000 units"),
        ("Known limitations of the parser", "limitation"),
        ("covid-19 guidance", "COVID 19"),
    ],
)
def test_query_terms_meet_document_terms(document: str, query: str) -> None:
    query_terms = set(tokenize(query))
    document_terms = set(tokenize(document))
    assert query_terms, query
    assert query_terms <= document_terms, (query_terms, document_terms)


def test_stopwords_and_punctuation_are_dropped_but_numbers_kept() -> None:
    assert tokenize("What is the a of, to 7?") == ["7"]


def test_codes_stay_whole_as_well_as_split() -> None:
    terms = tokenize("v2.3")
    assert "v2.3" in terms and "2.3" in terms
