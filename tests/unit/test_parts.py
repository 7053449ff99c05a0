"""A part of a document named in a request, found by its headings: from the heading's line to where the
next heading set at least as large starts, the text outside it blanked with its offsets kept."""

from __future__ import annotations

from core.schemas import Page, PageHeading
from rag.parts import part_text


def _page(number: int, *headings: tuple[str, float], text: str = "") -> Page:
    body = text or "\n".join(title for title, _ in headings) + "\nSome text."
    return Page(number=number, text=body, headings=[PageHeading(title=t, size=s) for t, s in headings])


MANUAL = [
    _page(1, ("A Field Guide to Pumps", 20.0)),
    _page(3, ("Table of Contents", 15.3)),
    _page(5, ("Foreword", 15.3)),
    _page(6, ("1 Getting started", 15.4), ("1.1 Unpacking", 12.7)),
    _page(
        8,
        ("1.2 Wiring and fuses", 12.7),
        text="Unpack the 12 crates.\n1.2 Wiring and fuses\nUse 16 A fuses.",
    ),
    _page(11, ("2 Maintenance", 15.4), ("2.1 Lists of spare parts", 12.7)),
    _page(30, ("Appendix A Error codes", 15.4), ("A.1 Codes by number", 12.7)),
    _page(34, ("Appendix B Warranty terms", 15.4)),
    _page(36, ("Index", 15.4), ("A", 12.7), ("B", 12.7)),
    _page(38, text="Zebra pumps, 7"),
]


def _pages(request: str, max_pages: int = 40) -> list[int]:
    return [page.number for page in part_text(request, MANUAL, max_pages)]


def test_a_part_named_by_its_number_runs_to_the_next_heading_as_large() -> None:
    assert _pages("Every figure in Appendix A, please") == [30], "Appendix B opens page 34"
    assert _pages("List all the dates in chapter 1.") == [6, 8]
    assert _pages("every number in section 1.2") == [8]


def test_the_part_starts_at_its_heading_line_and_keeps_its_offsets() -> None:
    page = part_text("every number in section 1.2", MANUAL, 40)[0]
    assert page.text.strip().startswith("1.2 Wiring and fuses") and "12 crates" not in page.text
    assert page.text.index("Use 16 A fuses.") == MANUAL[4].text.index("Use 16 A fuses.")


def test_a_part_named_by_its_words_or_quoted() -> None:
    assert _pages("Who is thanked in the foreword?") == [5]
    assert _pages("all the figures in the 'Wiring and fuses' section") == [8]
    assert _pages("List every date in the warranty terms appendix") == [34]


def test_a_heading_of_one_word_below_the_top_level_is_named_as_a_place() -> None:
    assert _pages("Every date in the unpacking, please") == [6, 8], "'1.1 Unpacking', up to '1.2 Wiring …'"
    assert "Use 16 A fuses." not in part_text("Every date in the unpacking", MANUAL, 40)[1].text
    assert _pages("which figures does the unpacking section give?") == [6, 8]
    assert _pages("How do I go about unpacking it? List every step's figure") == []
    assert _pages("List every figure in the unpacking guide") == [], "the word describes the guide"


def test_no_part_is_found_where_none_is_named() -> None:
    assert _pages("List every figure in this guide") == []
    # "list" is no name of the sub-section "2.1 Lists of spare parts", nor "B" of the index's letter B
    assert _pages("List every name in the error codes appendix b") == [30, 34]


def test_a_part_runs_to_the_end_of_the_document_and_at_most_max_pages() -> None:
    assert _pages("every name in the index") == [36, 38]
    assert _pages("every figure in chapter 2", max_pages=5) == [11]


REPORT = [
    _page(1, ("Annual Report 2023", 22.0), ("List of Figures", 15.4)),
    _page(2, ("1 Overview", 15.4)),
    _page(5, ("2 Results", 15.3), text="Revenue rose 12%.\n2  Results\nMargins held at 8%."),
    _page(9, ("CHAPTER 3", 15.4), ("Outlook", 13.0)),
    _page(12, ("Appendix B: Methods", 15.4)),
    _page(14, text="Sources: 4 surveys."),
]


def test_neither_the_title_nor_the_words_that_say_what_to_list_name_a_part() -> None:
    pages = [page.number for page in part_text("List every figure in chapter 2 of the annual report", REPORT, 40)]
    assert pages == [5], "not the title's pages, not 'List of Figures'"
    assert [p.number for p in part_text("List every figure in Appendix B", REPORT, 40)] == [12, 14]


def test_a_level_measured_a_little_smaller_still_ends_the_part_before_it() -> None:
    assert [p.number for p in part_text("every number in chapter 1", REPORT, 40)] == [2, 5]
    page_five = part_text("every number in chapter 1", REPORT, 40)[1]
    assert "Revenue rose 12%." in page_five.text and "Margins" not in page_five.text


def test_a_heading_of_its_number_alone_and_one_written_with_other_spacing() -> None:
    assert [p.number for p in part_text("all the dates in chapter 3", REPORT, 40)] == [9]
    page_five = part_text("every figure in section 2", REPORT, 40)[0]
    assert "Margins held at 8%." in page_five.text and "Revenue" not in page_five.text
