from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from ingestion.ocr import INSTALL_HINT, Tesseract
from ingestion.parsers import ParseError, PasswordRequired, decode_text, open_file, page_list, parse_document
from tests.fixtures import encrypted_pdf_bytes, long_pdf_bytes, scanned_pdf_bytes, write_report_pdf

TESSERACT = Tesseract("tesseract", "eng", 300, 120)


def test_pdf_pages_and_table_rows(tmp_path: Path) -> None:
    data = write_report_pdf(tmp_path / "report.pdf").read_bytes()
    document = parse_document("uploads/report.pdf", data)
    assert document.source == "report.pdf"
    assert [p.number for p in document.pages] == [1, 2, 3]
    assert [p.table_count for p in document.pages] == [0, 1, 0], "only the ruled page goes through pdfplumber"
    assert "Region | Q1 revenue | Q2 revenue\nRegion: North | Q1 revenue: 4.2 million" in document.pages[1].text
    assert "Region: Westland | Q1 revenue: 7.35 million | Q2 revenue: 8.15 million" in document.pages[1].text
    assert document.pages[1].text.count("Westland") == 1, "table text must not be duplicated"
    assert "640 people" in document.pages[0].text
    assert "\r" not in document.pages[0].text


def test_pdf_pages_are_read_one_at_a_time() -> None:
    parsed = open_file("long.pdf", long_pdf_bytes(5))
    assert parsed.page_count == 5
    pages = parsed.pages()
    first = next(pages)
    assert first.number == 1 and first.text.startswith("Page 1.")
    assert [p.number for p in pages] == [2, 3, 4, 5]
    parsed.close()
    with pytest.raises(RuntimeError, match="only once"):
        parsed.pages()


def test_text_and_markdown_are_one_page_zero() -> None:
    document = parse_document("notes.md", "# Title\r\n\r\nBody ✓".encode())
    assert document.file_type == "md"
    assert document.encoding == "utf-8"
    assert [(p.number, p.text) for p in document.pages] == [(0, "# Title\n\nBody ✓")]


def _zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "<w:document/>")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.txt", b"", "the file is empty"),
        ("empty.pdf", b"", "the file is empty"),
        ("blank.md", b"  \n\t", "the file is empty"),
        ("image.png", b"\x89PNG", "unsupported file type '.png'"),
        ("report.docx", _zip_bytes(), "unsupported file type '.docx'"),
        ("noextension", b"hello", r"unsupported file type '\(none\)'"),
        ("fake.pdf", b"hello, not a pdf", "not a PDF: the file does not start with a PDF header"),
        ("photo.pdf", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "not a PDF: the file is a PNG image"),
        ("letter.pdf", _zip_bytes(), "not a PDF: the file is a ZIP archive"),
        ("report.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "this is a PDF document, not text: rename it to .pdf"),
        ("notes.md", _zip_bytes(), "not a text file: it is a ZIP archive"),
        ("picture.txt", b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4, "not a text file: it is a JPEG image"),
        ("truncated.pdf", b"%PDF-1.4\n%%EOF", "the PDF is damaged"),
        ("garbage.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 40, "the PDF is damaged"),
    ],
)
def test_bad_files_get_specific_messages(name: str, data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_document(name, data)


def test_a_pdf_cut_short_keeps_the_pages_it_has() -> None:
    """A truncated download: PDFium rebuilds what it can; nothing crashes."""
    data = long_pdf_bytes(3)
    cut = data[: int(len(data) * 0.8)]
    try:
        document = parse_document("cut.pdf", cut)
    except ParseError as exc:
        assert "damaged" in str(exc)
    else:
        assert document.pages and "Page 1." in document.pages[0].text


def test_password_protected_pdf_asks_for_the_password() -> None:
    data = encrypted_pdf_bytes("secret", "Confidential numbers")
    with pytest.raises(PasswordRequired, match="encrypted with a password") as missing:
        parse_document("locked.pdf", data)
    assert not missing.value.wrong
    with pytest.raises(PasswordRequired, match="password is wrong") as wrong:
        parse_document("locked.pdf", data, password="guess")
    assert wrong.value.wrong
    assert "Confidential numbers" in parse_document("locked.pdf", data, password="secret").pages[0].text


def test_pdf_encrypted_with_an_empty_user_password_opens() -> None:
    data = encrypted_pdf_bytes("", "Readable without a password")
    assert "Readable without a password" in parse_document("open.pdf", data).pages[0].text


def test_scanned_pdf_is_read_by_tesseract() -> None:
    assert TESSERACT.available, "the OCR tests need the tesseract program: apt-get install tesseract-ocr (make ocr)"
    data = scanned_pdf_bytes(["Invoice 4471 was paid", "by the Harbor Logistics office"], blank_pages=1)
    document = parse_document("scan.pdf", data, ocr=TESSERACT)
    first, blank = document.pages
    assert not first.had_text_layer and first.ocr
    assert "4471" in first.text and "Harbor" in first.text
    assert not blank.had_text_layer and not blank.ocr and blank.text == ""


def test_scanned_pdf_without_tesseract_says_how_to_get_it() -> None:
    missing = Tesseract("tesseract-not-installed-here", "eng", 300, 10)
    assert not missing.available
    with pytest.raises(ParseError, match="no text found: the PDF has no text layer") as error:
        parse_document("scan.pdf", scanned_pdf_bytes(["Invoice 4471"]), ocr=missing)
    assert INSTALL_HINT in str(error.value)
    with pytest.raises(ParseError, match="OCR is turned off"):
        parse_document("scan.pdf", scanned_pdf_bytes(["Invoice 4471"]), ocr=None)


SAMPLES = {
    "cp1252": "The café’s “special” costs 5€ – naïve résumé for the señor.\n" * 3,
    "latin-1": "Grüße aus Köln, schöne Straße, à la façon française, © 2024 ± 5°.\n" * 3,
    "shift_jis": "日本語の文書です。これはテストです。東京都に住んでいます。\n" * 3,
    "cp1251": "Привет, мир! Это тестовый документ на русском языке.\n" * 3,
    "utf-16": "UTF-16 with a byte-order mark: été, 日本.\n",
    "utf-32": "UTF-32 with a byte-order mark: été.\n",
}


@pytest.mark.parametrize("encoding", list(SAMPLES))
def test_encoding_is_detected(encoding: str) -> None:
    text, detected = decode_text(SAMPLES[encoding].encode(encoding))
    assert text == SAMPLES[encoding]
    assert detected != "utf-8"


def test_encoding_is_reported_on_the_document() -> None:
    document = parse_document("legacy.txt", SAMPLES["cp1252"].encode("cp1252"))
    assert document.encoding == "cp1252"
    assert document.pages[0].text == SAMPLES["cp1252"]


def test_utf8_with_bom_and_crlf() -> None:
    assert decode_text("\ufeffline one\r\nline two".encode()) == ("line one\nline two", "utf-8")


def test_huge_single_line_is_read() -> None:
    line = "token " * 400_000
    document = parse_document("one-line.txt", line.encode())
    assert len(document.pages[0].text) == len(line)


def test_page_list_wording() -> None:
    assert page_list([3]) == "page 3"
    assert page_list([1, 2, 3, 5, 7, 8]) == "pages 1–3, 5, 7–8"
