"""The evaluation's readability check tells an answer from text spliced out of a page's layout."""

from __future__ import annotations

from rag.readability import problems, readable


def test_answers_that_read_as_sentences_pass() -> None:
    assert readable("The FAA must receive comments on this proposed AD by September 21, 2020 [1].")
    assert readable("Twitter, Inc. in San Francisco laid off 240 employees [2].")
    assert readable("Yes: a two-pilot effort may be used and will not cause system damage [4].")
    assert readable('The document says: "The leading dot makes the file invisible." [3]')
    assert readable("Le conseil a approuvé le budget [1].", english=False)


def test_layout_fragments_do_not() -> None:
    assert problems("10/12/2015, 1 2 / 1 3 / 2 0 15, 1 0 / 1 4 / 2 0 15, Twitter, Inc., San Francisco, 240 [1].") == [
        "no verb",
        "table cells",
    ]
    assert "spliced lines" in problems(
        "This regulation is within the scope of The FAA must receive comments on this Before further flight [4]."
    )
    assert "glued mark" in problems("The objects are written to a file called.RData5 in the directory [2].")
    assert "table cells" in problems("Company: Twitter | City: San Francisco is listed [1].")
    assert not readable("")


def test_a_row_quoted_as_its_named_cells_reads_but_bare_cells_do_not() -> None:
    named = (
        'The document says: "Notice Date: 11/30/2015; Effective: 12/04/2015; Received: 12/02/2015; '
        'Company: Symantec; City: Mountain View; No. Of: 44; Layoff/Closure: Layoff Permanent" [2].'
    )
    assert readable(named)
    assert "table cells" in problems('The document says: "Kentucky; 264,140; 12,155; 14,847; 254" [2].')
