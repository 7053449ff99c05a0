"""Table rows that name their columns, spaced-out cells joined, footnote marks out of words."""

from __future__ import annotations

from ingestion.footnotes import without_footnote_marks
from ingestion.tables import TableWriter, clean_cell, is_header, without_labels

HEADER = ["Company", "City", "No. Of Employees", "Layoff/Closure"]


def test_rows_name_their_columns_and_a_table_going_on_keeps_its_header() -> None:
    writer = TableWriter()
    first = writer.text([HEADER, ["Twitter, Inc.", "San Francisco", "240", "Layoff Permanent"]])
    assert first == (
        "Company | City | No. Of Employees | Layoff/Closure\n"
        "Company: Twitter, Inc. | City: San Francisco | No. Of Employees: 240 | Layoff/Closure: Layoff Permanent"
    )
    # The next page goes on without a header row: the last one with the same columns labels it.
    going_on = writer.text([["Safeway Inc.", "Pleasanton", "15", None], [None, None, None, None]])
    assert going_on == "Company: Safeway Inc. | City: Pleasanton | No. Of Employees: 15 | "
    assert writer.text([["a", "b"], ["1", "2"]]) == "a | b\n1 | 2", "other columns: no header to borrow"


def test_labels_come_off_to_give_the_bare_cells() -> None:
    row = "Company: Twitter, Inc. | City: San Francisco | No. Of Employees: 240 | Layoff/Closure: Layoff Permanent"
    assert without_labels(row) == "Twitter, Inc. | San Francisco | 240 | Layoff Permanent"
    assert without_labels("Note: the FAA must receive comments by September 21, 2020.") == (
        "Note: the FAA must receive comments by September 21, 2020."
    ), "a line that is not a table row keeps its words"


def test_what_counts_as_a_header() -> None:
    assert is_header(HEADER)
    assert not is_header(["06/22/2015", "Maxim Integrated Product", "San Jose", "150"]), "a date is data"
    assert not is_header(["Deposit", "Monthly rent"]), "two columns: a list of names and values"
    assert not is_header(["Total", "632", "53,454", "295"])


def test_spaced_out_cells_are_joined_and_words_are_not() -> None:
    assert clean_cell("0 3 / 2 5 / 2 0 16") == "03/25/2016"
    assert clean_cell("Layoff\nUnknown at this time") == "Layoff Unknown at this time"
    assert clean_cell("A B C") == "A B C", "too few tokens to be a spaced-out word"
    assert clean_cell(None) == ""


def test_footnote_marks_leave_the_words_they_are_glued_to() -> None:
    page = (
        "At the end of each session the objects are\nwritten to a file called .RData5\nin the current directory.\n"
        "Fit lm(y ~ x1 + x2) to the data.\nMore text here.\nAnd here.\n"
        "5 The leading dot makes it invisible in file listings.\n1 A first note."
    )
    cleaned = without_footnote_marks(page)
    assert "called .RData\nin the current" in cleaned
    assert "x1 + x2" in cleaned, "a short name with a digit is not a mark"
    assert cleaned.endswith("5 The leading dot makes it invisible in file listings.\n1 A first note.")
    assert without_footnote_marks("Windows10 is named.\nNo notes below.") == "Windows10 is named.\nNo notes below."


def test_rows_drawn_without_rules_between_them_are_read_apart() -> None:
    header = ["State", "Permit", "Handgun"]
    stacked = ["Indiana\nIowa\nKentucky", "81,935\n8,785\n264,140", "25,519\n267\n12,155"]
    assert TableWriter().text([header, stacked]).splitlines()[1:] == [
        "State: Indiana | Permit: 81,935 | Handgun: 25,519",
        "State: Iowa | Permit: 8,785 | Handgun: 267",
        "State: Kentucky | Permit: 264,140 | Handgun: 12,155",
    ]
    wrapped = ["Maxim Integrated\nProduct", "San Jose", "150", "Closure\nPermanent"]
    words_only = ["Layoff\nPermanent", "Twitter,\nInc.", "City of\nSan Jose"]
    assert len(TableWriter().text([wrapped]).splitlines()) == 1, "a cell whose text wraps stays one row"
    assert len(TableWriter().text([words_only]).splitlines()) == 1, "no figures: wrapped words, not rows"
