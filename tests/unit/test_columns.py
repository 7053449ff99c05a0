"""Pages set in columns are read column by column; other pages keep PDFium's text (ingestion/columns.py)."""

from __future__ import annotations

from fpdf import FPDF

from ingestion.columns import Run, column_text
from ingestion.parsers import parse_document

TITLE = "Minutes of the Bridge Committee held in the town hall on the third of May"  # across both columns
LEFT = [
    "The committee met on a cold morning",
    "and agreed that the old bridge over",
    "the river must be closed to lorries",
    "until its piers have been repaired.",
    "Work starts in the second week of May.",
]
RIGHT = [
    "Residents asked whether buses would",
    "still cross during the repairs, and",
    "were told that one lane stays open",
    "for buses and bicycles all summer.",
    "The next meeting is on 4 June.",
]


def _two_columns_written_across() -> bytes:
    """A page whose text is stored line by line across both columns, as many printed PDFs store it."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(20, 15)
    pdf.cell(170, 8, TITLE)
    _write_columns(pdf, 30)
    return bytes(pdf.output())


def _write_columns(pdf: FPDF, top: float) -> None:
    """LEFT and RIGHT as two columns from `top` (mm), stored line by line across the page."""
    for row, (left, right) in enumerate(zip(LEFT, RIGHT, strict=True)):
        y = top + row * 6
        pdf.set_xy(20, y)
        pdf.cell(80, 6, left)
        pdf.set_xy(110, y)
        pdf.cell(80, 6, right)


def _figures_table() -> bytes:
    """Two blocks of figures side by side, far apart: a table, not two columns of prose."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    for row in range(6):
        y = 30 + row * 6
        pdf.set_xy(20, y)
        pdf.cell(60, 6, f"{1000 + row * 17:,} {2000 + row * 31:,} {300 + row}")
        pdf.set_xy(120, y)
        pdf.cell(60, 6, f"{4000 + row * 13:,} {5000 + row * 7:,} {600 + row}")
    return bytes(pdf.output())


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_page_in_two_columns_reads_each_column_whole_and_in_order() -> None:
    page = parse_document("minutes.pdf", _two_columns_written_across()).pages[0]
    text = _flat(page.text)
    left, right = " ".join(LEFT), " ".join(RIGHT)
    assert left in text, "the left column's sentences run on, not interleaved with the right one's"
    assert right in text
    assert text.index(TITLE) < text.index(left) < text.index(right)


def test_blocks_of_figures_side_by_side_keep_their_rows() -> None:
    text = parse_document("table.pdf", _figures_table()).pages[0].text
    lines = text.splitlines()
    assert any("1,000" in line and "4,000" in line for line in lines), "a row of figures stays one line"


def _runs(column_left: float, lines: list[str], top: float = 700.0) -> list[Run]:
    return [Run(column_left, top - n * 12, column_left + 150, top - n * 12 + 9, line) for n, line in enumerate(lines)]


def test_a_title_across_the_columns_is_read_before_them_and_a_footer_after() -> None:
    title = Run(50, 730, 560, 742, "A title that runs across the whole page")
    footer = Run(50, 400, 560, 410, "A footnote that runs across the whole page")
    runs = [title, *_runs(50, LEFT), *_runs(400, RIGHT), footer]
    text = column_text(runs)
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == title.text and lines[-1] == footer.text
    assert lines[1 : 1 + len(LEFT)] == LEFT and lines[1 + len(LEFT) : -1] == RIGHT


def test_one_column_and_left_out_boxes() -> None:
    assert column_text(_runs(50, LEFT)) is None, "a page in one column keeps PDFium's text"
    runs = [*_runs(50, LEFT), *_runs(400, RIGHT)]
    table = (390.0, 600.0, 560.0, 710.0)  # the right column, as if it were a table written out on its own
    assert column_text(runs, [table]) is None, "what is left is one column"


def _columns_below_a_ruled_table() -> bytes:
    """A ruled table across the top of the page, then two columns stored line by line across."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(20, 15)
    for row in (["Bridge", "Lorries", "Buses"], ["Old bridge", "closed", "open"], ["New bridge", "open", "open"]):
        for cell in row:
            pdf.cell(50, 7, cell, border=1)
        pdf.ln(7)
        pdf.set_x(20)
    _write_columns(pdf, 50)
    return bytes(pdf.output())


def test_columns_are_read_beside_a_ruled_table_whose_cells_stay_in_its_rows() -> None:
    page = parse_document("bridges.pdf", _columns_below_a_ruled_table()).pages[0]
    text = _flat(page.text)
    assert page.table_count == 1
    assert " ".join(LEFT) in text and " ".join(RIGHT) in text, "the prose outside the table, column by column"
    assert "Bridge: Old bridge | Lorries: closed | Buses: open" in page.text
    assert text.count("Old bridge") == 1, "a cell is on its page once: in its row, not in the prose too"


def _columns_with_a_stamp_up_the_margin() -> bytes:
    """Two columns, and a stamp set up the left margin (its letters one above the other)."""
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    _write_columns(pdf, 30)
    pdf.set_font("Helvetica", size=7)
    with pdf.rotation(90, x=12, y=80):
        pdf.text(12, 80, STAMP)
    return bytes(pdf.output())


STAMP = "SCANNED ON PROD WITH PROPOSALS"


def test_a_stamp_up_the_margin_is_read_after_the_columns_not_into_them() -> None:
    text = parse_document("notice.pdf", _columns_with_a_stamp_up_the_margin()).pages[0].text
    flat = _flat(text)
    assert " ".join(LEFT) in flat and " ".join(RIGHT) in flat, "no stamp letter between a column's lines"
    assert text.splitlines()[-1] == STAMP, "the stamp is one line, after the page"
