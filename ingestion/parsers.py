"""Parse uploaded bytes into a Document of pages. PDFs go page by page through pdfplumber, with
tables extracted as rows of text on their page; TXT and Markdown must be UTF-8."""

from __future__ import annotations

import hashlib
import io
from pathlib import PurePath

from ragchat.schemas import Document, FileType, Page

SUFFIX_TYPES: dict[str, FileType] = {".pdf": "pdf", ".txt": "txt", ".md": "md", ".markdown": "md"}


class ParseError(ValueError):
    """The file cannot be read; the message is meant for the user as it is."""


def file_type_for(name: str) -> FileType:
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUFFIX_TYPES:
        raise ParseError(f"unsupported file type {suffix or '(none)'!r}: upload PDF, TXT or Markdown")
    return SUFFIX_TYPES[suffix]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_document(name: str, data: bytes) -> Document:
    file_type = file_type_for(name)
    if not data.strip():
        raise ParseError("the file is empty")
    pages = _parse_pdf(data) if file_type == "pdf" else [Page(number=0, text=_decode_text(data))]
    if not any(page.text.strip() for page in pages):
        raise ParseError(
            "no text found: the PDF has no text layer (a scan?); OCR is not available yet"
            if file_type == "pdf"
            else "the file holds no text"
        )
    return Document(
        source=PurePath(name).name,
        file_type=file_type,
        content_hash=content_hash(data),
        size_bytes=len(data),
        pages=pages,
    )


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text (invalid byte at offset {exc.start}); save it as UTF-8") from exc


def _parse_pdf(data: bytes) -> list[Page]:
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    if not data.lstrip().startswith(b"%PDF"):
        raise ParseError("not a PDF: the file does not start with a PDF header")
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            return [_parse_pdf_page(page, number) for number, page in enumerate(pdf.pages, start=1)]
    except ParseError:
        raise
    except Exception as exc:  # pdfminer raises many unrelated types for damaged files
        if _caused_by(exc, PDFPasswordIncorrect):
            raise ParseError("the PDF is encrypted with a password; remove the password and upload it again") from exc
        raise ParseError(f"the PDF is damaged and cannot be read ({type(exc).__name__}: {exc})") from exc


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """pdfplumber wraps pdfminer's errors (PdfminerException(PDFPasswordIncorrect()))."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind) or any(isinstance(arg, kind) for arg in seen.args):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _parse_pdf_page(page: object, number: int) -> Page:
    """Text outside tables, then each table as ' | '-joined rows, so a cell stays on its page."""
    tables = page.find_tables()  # type: ignore[attr-defined]
    if not tables:
        return Page(number=number, text=page.extract_text() or "")  # type: ignore[attr-defined]
    boxes = [table.bbox for table in tables]

    def outside_tables(obj: dict) -> bool:
        if obj.get("object_type") != "char":
            return True
        x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)

    text = page.filter(outside_tables).extract_text() or ""  # type: ignore[attr-defined]
    blocks = [text.strip()] if text.strip() else []
    for table in tables:
        rows = [" | ".join((cell or "").replace("\n", " ").strip() for cell in row) for row in table.extract()]
        blocks.append("\n".join(row for row in rows if row.strip(" |")))
    return Page(number=number, text="\n\n".join(blocks), table_count=len(tables))
