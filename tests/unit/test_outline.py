"""A PDF's headings found by their type size: each chunk knows its section and its document's title."""

from __future__ import annotations

from fpdf import FPDF

from core.schemas import PageHeading
from ingestion.chunking import chunk_document
from ingestion.outline import Outline, is_heading_line, usable_title
from ingestion.parsers import parse_document

BODY = "The pump is checked every week by the site team, who record the pressure in the log book. " * 3


def manual_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=22)
    pdf.multi_cell(0, 12, "Pump Station Handbook", new_x="LMARGIN", new_y="NEXT")
    for chapter, sections in (("1 Maintenance", ("1.1 Weekly checks", "1.2 Filters")), ("2 Safety", ("2.1 Power",))):
        pdf.set_font("Helvetica", size=16)
        pdf.multi_cell(0, 10, chapter, new_x="LMARGIN", new_y="NEXT")
        for section in sections:
            pdf.set_font("Helvetica", size=13)
            pdf.multi_cell(0, 8, section, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", size=10)
            pdf.multi_cell(0, 5, BODY, new_x="LMARGIN", new_y="NEXT")
        pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 5, "Continued: " + BODY, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_headings_nest_by_size_and_carry_over_to_the_next_page() -> None:
    document = parse_document("handbook.pdf", manual_pdf())
    titles = [h.title for page in document.pages for h in page.headings]
    assert titles == [
        "Pump Station Handbook",
        "1 Maintenance",
        "1.1 Weekly checks",
        "1.2 Filters",
        "2 Safety",
        "2.1 Power",
    ]
    chunks = chunk_document(document, chunk_size=200, chunk_overlap=0)
    paths = {tuple(c.heading_path) for c in chunks}
    assert ("Pump Station Handbook", "1 Maintenance", "1.2 Filters") in paths, "1.2 closed 1.1, not 1"
    assert ("Pump Station Handbook", "2 Safety", "2.1 Power") in paths, "2 closed all of chapter 1"
    last = chunks[-1]
    assert last.page == 3 and last.heading_path[-1] == "2.1 Power", "a page without headings goes on in the section"
    assert all(c.title == "Pump Station Handbook" for c in chunks)
    assert last.keyword_text.startswith("Pump Station Handbook › 2 Safety › 2.1 Power\nContinued:")
    assert last.text.startswith("Continued:"), "the chunk's own text is what the page says"


def test_what_is_a_heading_and_a_title() -> None:
    assert is_heading_line("3.2 Changing the length of an object")
    assert not is_heading_line("2 Simple manipulations; numbers and vectors . . . . 8"), "a contents line"
    assert not is_heading_line("• Box 1 or 2, enter $156,400")
    assert not is_heading_line("Hatta International Airport in Jakarta,")
    assert (
        usable_title("The Digital Millennium Copyright Act of 1998") == "The Digital Millennium Copyright Act of 1998"
    )
    assert usable_title("Binder1.pdf") == usable_title("Untitled") == usable_title(None) == ""
    outline = Outline()
    outline.first_page(
        [
            PageHeading(title="LayoutParser: A Unified Toolkit for Deep", size=12.0),
            PageHeading(title="Learning Based Document Image Analysis", size=12.7),
            PageHeading(title="Zejiang Shen", size=8.8),
        ]
    )
    assert outline.title == "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"
