"""Running heads and feet of a PDF are blanked at ingest, at the same offsets, and nothing else is."""

from __future__ import annotations

from fpdf import FPDF

from ingestion.page_image import render_page
from ingestion.parsers import open_file
from ingestion.running_lines import RunningLineRule, keeps_offsets, learn_running_lines, line_key

RULE = RunningLineRule(margin=3, share=0.4, sample=12)
HEAD = "Federal Register / Vol. 85, No. 152 / Thursday, August 6, 2020 / Proposed Rules {folio}"
SLUG = "VerDate Sep<11>2014 16:21 Aug 05, 2020 Jkt 250001 PO 00000 Frm 0000{number}"
DATES = ["07/17/2015", "09/18/2015", "12/11/2015", "02/14/2016", "03/01/2016"]


def page(index: int) -> str:
    """A page of a print template (0-based index): head, a table that starts with a date, slug, folio."""
    return (
        f"{HEAD.format(folio=47698 + index)}\n{DATES[index]}\nThe harbour opened in {1870 + 7 * index}.\n"
        f"Region | Q1 | Q2\nRegion | Q1 | Q2\n{SLUG.format(number=index + 1)}\n{index + 1}"
    )


PAGES = {index: page(index) for index in range(5)}


def test_a_line_is_compared_with_its_numbers_as_one_mark() -> None:
    assert line_key("Page 3 of  40") == line_key("page 12 of 40") == line_key("Page 7 of40") == "page#of#"


def test_template_lines_whose_numbers_stay_or_count_pages_are_running_and_data_lines_are_not() -> None:
    patterns = learn_running_lines(PAGES, RULE).patterns
    assert line_key(HEAD.format(folio=1)) in patterns and line_key(SLUG.format(number=1)) in patterns
    assert "#" in patterns, "a bare page number counts the pages"
    assert line_key("07/17/2015") not in patterns, "a date that changes some other way is data"
    assert line_key("Region | Q1 | Q2") not in patterns, "a table header repeated on each page gives its rows meaning"
    assert line_key("The harbour opened in 1870.") not in patterns, "its numbers do not count the pages"
    assert not learn_running_lines({0: PAGES[0], 1: PAGES[1]}, RULE).patterns, "two pages are too few to tell"
    log = {i: f"Daily log 2024-03-{i + 1:02d}\nThe crane moved {i * 7} boxes.\nHarbor log" for i in range(6)}
    assert list(learn_running_lines(log, RULE).patterns) == ["harborlog"], "a daily log's dates count its pages"
    assert not learn_running_lines(PAGES, RunningLineRule(margin=0, share=0.5, sample=12)).patterns


def test_running_lines_are_blanked_at_the_same_offsets_and_only_where_they_fit() -> None:
    running = learn_running_lines(PAGES, RULE)
    text = page(2)
    blanked = running.blank(text, 2)
    assert keeps_offsets(blanked, text) and "VerDate" not in blanked and "Federal Register" not in blanked
    assert blanked.index("The harbour opened in 1884.") == text.index("The harbour opened in 1884.")
    assert "12/11/2015" in blanked and "Region | Q1 | Q2" in blanked
    assert running.blank(text, 3).endswith("\n3"), "on page 4 the page number would be 4: not this template"
    assert "VerDate" not in running.blank(text.replace("Jkt 250001", "Jkt 250009"), 2), "one number in five may differ"
    assert not keeps_offsets(blanked.replace("harbour", "harbor"), text)


class _Handbook(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", size=8)
        self.cell(0, 5, "Harbor Logistics Staff Handbook - Revision 4")
        self.ln(10)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", size=8)
        self.cell(0, 5, f"Page {self.page_no()} of 6")


TOPICS = ["forklift training", "leave requests", "fire drills", "overtime pay", "cold storage", "parking"]


def handbook_pdf() -> bytes:
    pdf = _Handbook()
    for topic in TOPICS:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, f"This page explains {topic}. Ask the site manager about {topic}.")
    return bytes(pdf.output())


def test_a_pdf_streams_without_its_running_lines_and_its_highlight_still_lands() -> None:
    data = handbook_pdf()
    parsed = open_file("handbook.pdf", data, running=RULE)
    pages = list(parsed.pages())
    parsed.close()
    assert all("Staff Handbook" not in p.text and "of 6" not in p.text for p in pages)
    assert "This page explains fire drills." in pages[2].text
    kept = open_file("handbook.pdf", data)
    assert all("Staff Handbook" in p.text for p in kept.pages()), "without a rule the lines stay"
    kept.close()
    sentence = "This page explains fire drills."
    start = pages[2].text.index(sentence)
    image = render_page(data, 3, 1.0, stored_text=pages[2].text, span=(start, start + len(sentence)))
    assert image.highlighted
