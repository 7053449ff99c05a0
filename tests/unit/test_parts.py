"""A part of a document named in a request, found by its headings: the pages from the heading to the
next one set at least as large."""

from __future__ import annotations

from core.schemas import Page, PageHeading
from rag.parts import part_pages


def _page(number: int, *headings: tuple[str, float]) -> Page:
    return Page(number=number, text="", headings=[PageHeading(title=t, size=s) for t, s in headings])


MANUAL = [
    _page(1, ("A Field Guide to Pumps", 20.0)),
    _page(3, ("Table of Contents", 15.3)),
    _page(5, ("Foreword", 15.3)),
    _page(6, ("1 Getting started", 15.4), ("1.1 Unpacking", 12.7)),
    _page(8, ("1.2 Wiring and fuses", 12.7)),
    _page(11, ("2 Maintenance", 15.4), ("2.1 Lists of spare parts", 12.7)),
    _page(30, ("Appendix A Error codes", 15.4), ("A.1 Codes by number", 12.7)),
    _page(34, ("Appendix B Warranty terms", 15.4)),
    _page(36, ("Index", 15.4), ("A", 12.7), ("B", 12.7)),
    _page(38),
]


def test_a_part_named_by_its_number_runs_to_the_next_heading_as_large() -> None:
    assert part_pages("Every figure in Appendix A, please", MANUAL, 40) == set(range(30, 35))
    assert part_pages("List all the dates in chapter 1.", MANUAL, 40) == set(range(6, 12))
    assert part_pages("every number in section 1.2", MANUAL, 40) == set(range(8, 12))


def test_a_part_named_by_its_words_or_quoted() -> None:
    assert part_pages("Who is thanked in the foreword?", MANUAL, 40) == {5, 6}
    assert part_pages("all the figures in the 'Wiring and fuses' section", MANUAL, 40) == set(range(8, 12))
    assert part_pages("List every date in the warranty terms appendix", MANUAL, 40) == {34, 35, 36}


def test_no_part_is_found_where_none_is_named() -> None:
    assert part_pages("List every figure in this guide", MANUAL, 40) == set()
    # "list" is no name of the sub-section "2.1 Lists of spare parts", nor "B" of the index's letter B
    assert part_pages("List every name in the error codes appendix b", MANUAL, 40) == set(range(30, 37))


def test_a_part_runs_to_the_end_of_the_document_and_at_most_max_pages() -> None:
    assert part_pages("every name in the index", MANUAL, 40) == {36, 37, 38}
    assert part_pages("every figure in chapter 2", MANUAL, 5) == set(range(11, 16))
