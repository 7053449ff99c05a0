"""Every date, figure or name of a document, found in its text and cited, and the requests for them."""

from __future__ import annotations

from rag.extraction import extract, item_list
from tests.chunks import text_hit

LEASE = text_hit(
    "COMMERCIAL LEASE AGREEMENT\nThe lease between Kestrel Harbour Properties and Brightwater Seafoods starts on "
    "3 March 2025. Rent is GBP 86,400 a year, rising by 4% from 1 April 2027. The deposit is 7,200. Signed by "
    "Fiona Marsh in Port Elliston at 14:30. It ends on 31/03/2030.",
    source="lease.pdf",
    page=2,
)


def test_dates_figures_and_names_are_found_once_each_with_their_sentence() -> None:
    dates = [item.value for item in extract("dates", [LEASE])]
    assert dates == ["3 March 2025", "1 April 2027", "31/03/2030"]
    figures = [item.value for item in extract("figures", [LEASE])]
    assert {"86,400", "4%", "7,200"} <= set(figures) and "2025" not in figures and "30" not in figures
    names = [item.value for item in extract("names", [LEASE])]
    assert {"Kestrel Harbour Properties", "Brightwater Seafoods", "Fiona Marsh", "Port Elliston"} <= set(names)
    assert "COMMERCIAL LEASE AGREEMENT" not in names, "a heading in capitals is not a name"


def test_the_list_cites_each_item_to_its_sentence_and_page() -> None:
    text, passages = item_list(extract("dates", [LEASE]))
    lines = text.splitlines()
    assert lines[0] == (
        "- 3 March 2025: “The lease between Kestrel Harbour Properties and Brightwater Seafoods starts on "
        "3 March 2025.” [1]"
    ), "the sentence, not the heading in capitals above it"
    assert lines[1].endswith("[2]") and len(passages) == 3 and all(p.chunk.page == 2 for p in passages)
    assert passages[0].chunk.text.startswith("The lease between") and passages[0].chunk.char_start > 0


def test_a_table_of_contents_gives_no_items() -> None:
    contents = text_hit(
        "Table of Contents\n1 Introduction .................... 4\n12.5 Multiple figures ............ 79\n"
        "Appendix B Invoking R ........... 98\nThe deposit of 7,200 is held by Fiona Marsh.",
        source="manual.pdf",
        page=3,
    )
    assert [item.value for item in extract("figures", [contents])] == ["7,200"]


def test_the_page_number_of_a_running_head_is_no_item() -> None:
    page = text_hit(
        "92 Appendix B Invoking R\nSet the stack to 350k; the limit is 100000 expressions.", source="m.pdf", page=98
    )
    assert [item.value for item in extract("figures", [page])] == ["350k", "100000"]
    alone = text_hit("92\nAppendix B Invoking R\nThe limit is 100000 expressions.", source="m.pdf", page=98)
    assert [item.value for item in extract("figures", [alone])] == ["100000"]
    sentence = text_hit("92 pumps were shipped in 2024.\nEach weighs 40 kg.", source="m.pdf", page=5)
    assert [item.value for item in extract("figures", [sentence])] == ["92", "40 kg"]


def test_leader_dots_before_an_amount_and_a_sentence_on_the_first_line_keep_their_items() -> None:
    prices = text_hit("Coffee .......... $3.50\nSubtotal ........ 1,250.00", source="menu.pdf", page=1)
    assert [item.value for item in extract("figures", [prices])] == ["$3.50", "1,250.00"]
    opening = text_hit("15 employees joined the team in March and\nstayed.", source="m.pdf", page=4)
    assert [item.value for item in extract("figures", [opening])] == ["15"]
    head = text_hit("Chapter 1: Creating R packages 19\nUse 350k of stack.", source="m.pdf", page=27)
    assert [item.value for item in extract("figures", [head])] == ["350k"]
