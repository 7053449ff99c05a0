"""Questions a PDF plainly answers, on the real parts (packaged embedder, embedded Chroma, the 0.5B):
a table row is found by a question that names its column and not its value, and a question in English
finds the passage of French minutes that holds its figure, and is answered from it."""

from __future__ import annotations

import re
from pathlib import Path

from core.settings import get_settings
from ragchat.application import open_session
from tests.fixtures import write_french_minutes_pdf, write_report_pdf


def test_a_table_row_is_found_by_a_question_naming_its_column(home: Path, tmp_path: Path) -> None:
    session = open_session(get_settings())
    assert session.ingest_paths([write_report_pdf(tmp_path / "report.pdf")])[0].status == "indexed"
    question = "What was the South region's revenue in the first quarter (Q1 revenue)?"
    found = session.search(question)
    # The row is indexed with its header: each value says which column it is in.
    assert "Region: South | Q1 revenue: 3.1 million" in found.hits[0].chunk.text
    answer = session.ask(question)
    assert "3.1" in answer.answer
    assert any(c.page == 2 for c in answer.citations)


def test_an_english_question_finds_and_is_answered_from_french_minutes(home: Path, tmp_path: Path) -> None:
    session = open_session(get_settings())
    assert session.ingest_paths([write_french_minutes_pdf(tmp_path / "pv.pdf")])[0].status == "indexed"
    found = session.search("How many housing units does the project at 1069 boulevard de Sainte-Adèle add?")
    assert any("43 logements" in hit.chunk.text for hit in found.hits)
    answer = session.ask("Which resolution number was adopted for the demolition at 1069 boulevard de Sainte-Adèle?")
    assert "2023-001" in answer.answer and answer.citations
    # No document is in English: the question was also searched as the model translated it.
    assert answer.translated_query and answer.translated_query != answer.question
    assert all(c.source == "pv.pdf" for c in answer.citations)
    # Whatever the 0.5B makes of another question, a figure it shows is one the French passages hold.
    for question in (
        "How many housing units does the project at 1069 boulevard de Sainte-Adèle add?",
        "What is the estimated cost of the renovation work for the building?",
    ):
        answer = session.ask(question)
        given = " ".join(hit.chunk.text for hit in answer.given.hits).replace(" ", "").replace(",", "")
        for figure in re.findall(r"\d[\d,.]*\d|\d", answer.answer):
            assert figure.replace(",", "") in given, (figure, answer.answer)
