from __future__ import annotations

from pathlib import Path

import pytest

from ingestion.parsers import ParseError, parse_document
from tests.fixtures import write_report_pdf


def test_pdf_pages_and_table_rows(tmp_path: Path) -> None:
    data = write_report_pdf(tmp_path / "report.pdf").read_bytes()
    document = parse_document("uploads/report.pdf", data)
    assert document.source == "report.pdf"
    assert [p.number for p in document.pages] == [1, 2, 3]
    assert document.pages[1].table_count == 1
    assert "Westland | 7.35 million | 8.15 million" in document.pages[1].text
    assert document.pages[1].text.count("Westland") == 1, "table text must not be duplicated"
    assert "640 people" in document.pages[0].text


def test_text_and_markdown_are_one_page_zero() -> None:
    document = parse_document("notes.md", "# Title\n\nBody ✓".encode())
    assert document.file_type == "md"
    assert [(p.number, p.text) for p in document.pages] == [(0, "# Title\n\nBody ✓")]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.txt", b"", "empty"),
        ("blank.md", b"  \n\t", "empty"),
        ("latin1.txt", "caf\xe9".encode("latin-1"), "not UTF-8"),
        ("image.png", b"\x89PNG", "unsupported file type '.png'"),
        ("fake.pdf", b"hello, not a pdf", "not a PDF"),
        ("truncated.pdf", b"%PDF-1.4\n%%EOF", "damaged"),
    ],
)
def test_bad_files_get_specific_messages(name: str, data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_document(name, data)


def test_pdf_without_text_is_reported(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(10, 10, 50, 50)
    path = tmp_path / "scan.pdf"
    pdf.output(str(path))
    with pytest.raises(ParseError, match="no text"):
        parse_document("scan.pdf", path.read_bytes())


def _encrypted_pdf(path: Path, user_password: str, text: str) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_encryption(owner_password="owner", user_password=user_password)
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.cell(0, 10, text)
    pdf.output(str(path))
    return path.read_bytes()


def test_password_protected_pdf_says_so(tmp_path: Path) -> None:
    data = _encrypted_pdf(tmp_path / "locked.pdf", "secret", "Confidential numbers")
    with pytest.raises(ParseError, match="encrypted with a password"):
        parse_document("locked.pdf", data)


def test_pdf_encrypted_with_an_empty_user_password_opens(tmp_path: Path) -> None:
    data = _encrypted_pdf(tmp_path / "open.pdf", "", "Readable without a password")
    assert "Readable without a password" in parse_document("open.pdf", data).pages[0].text
