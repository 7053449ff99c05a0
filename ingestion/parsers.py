"""Read uploaded bytes as pages of text, one page at a time.

PDFs are opened with pypdfium2 (PDFium) and streamed page by page, so a 2,000-page file is never held
as parsed objects all at once. A page's text comes from PDFium (1,259 pages/s here) unless the page
has ruling lines that may form a table: only those pages go through pdfplumber (9.4 pages/s), which
keeps each table cell once, as ``a | b | c`` rows on its page. A page without a text layer is read by
Tesseract when it is installed (ingestion/ocr.py) and listed either way.

TXT and Markdown are one page numbered 0; their encoding is detected (BOM, UTF-8, then
charset-normalizer). A file that is not what its name says is named for what it is.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from core.schemas import Document, FileType, Page
from ingestion.columns import Box, Run, column_text, page_runs
from ingestion.footnotes import without_footnote_marks
from ingestion.ocr import INSTALL_HINT, OcrError, Tesseract
from ingestion.outline import TypeSizes, kept_headings, line_sizes, page_headings, usable_title
from ingestion.running_lines import RunningLineRule, RunningLines, learn_running_lines, sample_indexes
from ingestion.tables import TableWriter

log = logging.getLogger(__name__)

SUFFIX_TYPES: dict[str, FileType] = {".pdf": "pdf", ".txt": "txt", ".md": "md", ".markdown": "md"}

# Leading bytes of formats people upload by mistake, and what to call them.
MAGIC: list[tuple[bytes, str]] = [
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"PK\x03\x04", "a ZIP archive (Word, Excel and OpenDocument files are ZIP archives too)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document"),
    (b"{\\rtf", "an RTF document"),
    (b"\x7fELF", "a program (ELF executable)"),
]
# charset-normalizer often ties Western single-byte encodings; the most common one wins a tie.
PREFERRED_ENCODINGS = ["utf_8", "cp1252", "latin_1", "cp1251", "cp932", "gb18030", "euc_kr"]


class ParseError(ValueError):
    """The file cannot be read; the message is meant for the user as it is."""


class PasswordRequired(ParseError):
    """An encrypted PDF whose user password is not empty; `wrong` when one was given and failed."""

    def __init__(self, wrong: bool) -> None:
        self.wrong = wrong
        super().__init__(
            "the password is wrong for this encrypted PDF"
            if wrong
            else "the PDF is encrypted with a password: enter it to index the file (CLI: --password)"
        )


def file_type_for(name: str) -> FileType:
    suffix = PurePath(name).suffix.lower()
    if suffix not in SUFFIX_TYPES:
        raise ParseError(f"unsupported file type {suffix or '(none)'!r}: upload PDF, TXT or Markdown")
    return SUFFIX_TYPES[suffix]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def version_hash(data: bytes, redact: bool) -> str:
    """The version key of a document: its bytes, plus the one option that changes its chunks' text.
    Re-uploading the same bytes with redaction switched on is a new version that replaces the old."""
    return content_hash(data) if not redact else content_hash(data + b"\x00ragchat-redacted-v1")


def sniff(data: bytes) -> str | None:
    """What the leading bytes say the file is, or None."""
    head = data[:16]
    return next((what for magic, what in MAGIC if head.startswith(magic)), None)


@dataclass
class ParsedFile:
    """An opened file whose pages are read on demand (`pages()` may be iterated once)."""

    source: str
    file_type: FileType
    content_hash: str
    size_bytes: int
    page_count: int
    encoding: str | None = None
    warnings: list[str] = field(default_factory=list)
    title: str = ""  # a PDF's metadata title, when it names the document
    _pages: Iterator[Page] | None = None
    _closer: Any = None

    def pages(self) -> Iterator[Page]:
        if self._pages is None:
            raise RuntimeError("pages() can be iterated only once")
        pages, self._pages = self._pages, None
        return pages

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
            self._closer = None


def open_file(
    name: str,
    data: bytes,
    password: str | None = None,
    ocr: Tesseract | None = None,
    version: str | None = None,
    running: RunningLineRule | None = None,
) -> ParsedFile:
    """Check and open a file. Errors that need no page (type, emptiness, header, password, damage)
    are raised here, before anything is written; page-level problems become warnings. A PDF's
    running heads and feet are blanked by `running` (ingestion/running_lines.py); None keeps them."""
    file_type = file_type_for(name)
    source = PurePath(name.replace("\\", "/")).name
    if not data.strip():
        raise ParseError("the file is empty")
    version = version or content_hash(data)
    if file_type == "pdf":
        reader = PdfReader(data, password, ocr, running)
        return ParsedFile(
            source,
            file_type,
            version,
            len(data),
            reader.page_count,
            title=reader.title,
            _pages=reader.pages(),
            _closer=reader.close,
        )
    text, encoding = decode_text(data)
    if not text.strip():
        raise ParseError("the file holds no text")
    return ParsedFile(source, file_type, version, len(data), 1, encoding, _pages=iter([Page(number=0, text=text)]))


def parse_document(name: str, data: bytes, password: str | None = None, ocr: Tesseract | None = None) -> Document:
    """The whole file at once (tests, benchmarks); ingestion streams with `open_file` instead."""
    parsed = open_file(name, data, password, ocr)
    try:
        pages = list(parsed.pages())
    finally:
        parsed.close()
    if not any(page.text.strip() for page in pages):
        raise ParseError(no_text_message([p.number for p in pages], ocr))
    return Document(
        source=parsed.source,
        file_type=parsed.file_type,
        content_hash=parsed.content_hash,
        size_bytes=parsed.size_bytes,
        pages=pages,
        encoding=parsed.encoding,
    )


def no_text_message(pages: list[int], ocr: Tesseract | None) -> str:
    where = "the PDF has no text layer (a scan?)" if pages else "the file holds no text"
    if ocr is None:
        return f"no text found: {where}; OCR is turned off (RAGCHAT_OCR=false)"
    if not ocr.available:
        return f"no text found: {where}; {INSTALL_HINT}"
    return f"no text found: {where}, and OCR read nothing from {page_list(pages)}"


def page_list(pages: list[int]) -> str:
    """'page 3' or 'pages 1–4, 7' for messages."""
    if not pages:
        return "no pages"
    runs: list[str] = []
    start = previous = pages[0]
    for number in [*pages[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        runs.append(str(start) if start == previous else f"{start}–{previous}")
        if number is not None:
            start = previous = number
    return ("page " if len(pages) == 1 else "pages ") + ", ".join(runs)


# ----------------------------------------------------------------------------- text files


def decode_text(data: bytes) -> tuple[str, str]:
    """Text and the encoding it was read with. Newlines are normalised to \\n."""
    if data.startswith(b"%PDF-"):
        raise ParseError("this is a PDF document, not text: rename it to .pdf")
    for bom, encoding in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return _newlines(data.decode(encoding)), encoding.removesuffix("-sig")
            except UnicodeDecodeError as exc:
                raise ParseError(f"the file has a {encoding} byte-order mark but is not valid {encoding}") from exc
    try:
        return _newlines(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    what = sniff(data)
    if what:
        raise ParseError(f"not a text file: it is {what}")
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data[:2_000_000]))
    if not matches:
        raise ParseError("not a text file (binary data), or an encoding that could not be recognised")
    best = min(
        matches,
        key=lambda m: (
            round(m.chaos, 2),
            -round(m.coherence, 2),
            PREFERRED_ENCODINGS.index(m.encoding) if m.encoding in PREFERRED_ENCODINGS else len(PREFERRED_ENCODINGS),
        ),
    )
    if best.chaos > 0.4:
        raise ParseError("not a text file (binary data), or an encoding that could not be recognised")
    try:
        text = data.decode(best.encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(f"the text encoding could not be recognised ({exc.reason}); save it as UTF-8") from exc
    # When the most common code page reads the bytes as the same text, name that one.
    for common in PREFERRED_ENCODINGS[1:]:
        try:
            if data.decode(common) == text:
                return _newlines(text), common
        except UnicodeDecodeError:
            continue
    return _newlines(text), best.encoding


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


# ----------------------------------------------------------------------------- PDF


# Pages sampled for a document's body type size when running lines are not looked for.
SIZE_SAMPLE_PAGES = 24
# Looked up with a PdfiumError's err_code, None when it has none.
PDFIUM_ERRORS: dict[int | None, str] = {1: "unknown error", 2: "file error", 3: "format error", 6: "page error"}


class PdfReader:
    """A PDF opened once and read page by page; only the current page's objects are alive."""

    def __init__(
        self, data: bytes, password: str | None, ocr: Tesseract | None, running: RunningLineRule | None = None
    ) -> None:
        import pypdfium2 as pdfium

        start = data[:1024].find(b"%PDF-")
        if start < 0:
            what = sniff(data)
            if what:
                raise ParseError(f"not a PDF: the file is {what}")
            raise ParseError("not a PDF: the file does not start with a PDF header")
        self._data = data
        self._password = password or None
        self._ocr = ocr
        self._running = running
        self._running_lines = RunningLines()
        self._plumber: Any = None
        self._tables = TableWriter()  # a table going on over pages keeps its header
        self._sizes = TypeSizes()  # the document's body size, for its headings
        try:
            self._pdf = pdfium.PdfDocument(data, password=self._password)
        except pdfium.PdfiumError as exc:
            code = getattr(exc, "err_code", None)
            if code == 4:
                raise PasswordRequired(wrong=bool(password)) from exc
            if code == 5:
                raise ParseError("the PDF uses an encryption scheme that cannot be opened here") from exc
            raise ParseError(f"the PDF is damaged and cannot be read (PDFium: {PDFIUM_ERRORS.get(code, exc)})") from exc
        self.page_count = len(self._pdf)
        self.title = usable_title(self._pdf.get_metadata_dict(skip_empty=True).get("Title"))
        if self.page_count == 0:
            self._pdf.close()
            raise ParseError("the PDF has no pages")

    def pages(self) -> Iterator[Page]:
        # A sample of pages spread over the document: its running lines, and its body type size (the
        # first page alone, a title page, would set it too large to find headings there).
        count = self._running.sample if self._running is not None else SIZE_SAMPLE_PAGES
        sampled = {i: self._pdfium_lines(i) for i in sample_indexes(self.page_count, count)}
        for _, lines in sampled.values():
            self._sizes.add(lines)
        if self._running is not None:
            texts = {i: text for i, (text, _) in sampled.items()}
            self._running_lines = learn_running_lines(texts, self._running)
        for index in range(self.page_count):
            yield self._read(index)

    def _pdfium_lines(self, index: int) -> tuple[str, list[tuple[float, str]]]:
        """PDFium's text of a page and its lines' sizes (nothing when it cannot be read: _read says so
        when the page's turn comes)."""
        try:
            page = self._pdf[index]
            try:
                text, lines, _ = _pdfium_page_lines(page)
                return text, lines
            finally:
                page.close()
        except Exception:
            return "", []

    def close(self) -> None:
        if self._plumber is not None:
            self._plumber.close()
            self._plumber = None
        self._pdf.close()

    def _read(self, index: int) -> Page:
        number = index + 1
        try:
            page = self._pdf[index]
        except Exception as exc:  # PDFium cannot load this page: say so, keep the others
            log.warning("page %d could not be loaded: %s", number, exc)
            return Page(number=number, text="", had_text_layer=False)
        try:
            text, lines, runs = _pdfium_page_lines(page)
            table_count = 0
            if text.strip() and _may_hold_table(page):
                text, table_count = self._with_tables(index, text, runs)
            if text.strip():
                # pdfplumber's text outside the tables comes first: its ends are the page's margins.
                outside = text.partition("\n\n")[0] if table_count else text
                text = without_footnote_marks(self._running_lines.blank(outside, index) + text[len(outside) :])
                headings = kept_headings(page_headings(lines, self._sizes), text)  # not a blanked running head
                return Page(number=number, text=text, headings=headings, table_count=table_count)
            if self._ocr is not None and self._ocr.available:
                try:
                    read = self._ocr.read_page(page).strip()
                except OcrError as exc:
                    log.warning("OCR of page %d failed: %s", number, exc)
                    read = ""
                return Page(number=number, text=read, had_text_layer=False, ocr=bool(read))
            return Page(number=number, text="", had_text_layer=False)
        finally:
            page.close()

    def _with_tables(self, index: int, fallback: str, runs: list[Run]) -> tuple[str, int]:
        """The text outside tables plus each table as rows; PDFium's text when pdfplumber finds none.
        Outside the tables, a page set in columns is read column by column (ingestion/columns.py),
        else as pdfplumber reads it."""
        try:
            if self._plumber is None:
                import pdfplumber

                self._plumber = pdfplumber.open(io.BytesIO(self._data), password=self._password or "")
            page = self._plumber.pages[index]
            try:
                outside, tables, boxes = _plumber_page_text(page, self._tables)
            finally:
                page.close()
        except Exception as exc:  # pdfminer fails on some files PDFium reads: keep PDFium's text
            log.warning("table extraction failed on page %d (%s); using plain text", index + 1, exc)
            return fallback, 0
        if not boxes:
            return fallback, 0
        try:
            in_columns = column_text(runs, boxes) if runs else None
        except Exception as exc:  # never fail a page over its columns: pdfplumber's text then
            log.warning("columns could not be read on page %d (%s)", index + 1, exc)
            in_columns = None
        if in_columns is not None:
            outside = clean_pdfium_text(in_columns)
        blocks = [outside.strip()] if outside.strip() else []
        return "\n\n".join(blocks + tables), len(boxes)


def _pdfium_page_lines(page: Any) -> tuple[str, list[tuple[float, str]], list[Run]]:
    """The page's cleaned text (column by column when it is set in columns: ingestion/columns.py),
    each of its lines with its type size (ingestion/outline.py), and its runs of text."""
    textpage = page.get_textpage()
    try:
        raw = textpage.get_text_range()
        runs, text = _in_columns(page, textpage, raw)
        return clean_pdfium_text(raw if text is None else text), line_sizes(textpage, raw), runs
    finally:
        textpage.close()


def _in_columns(page: Any, textpage: Any, raw: str) -> tuple[list[Run], str | None]:
    """The page's runs and its text read column by column (None: not in columns). A turned page is
    left as it is (pdfplumber's table boxes are in the turned page's coordinates, PDFium's are not),
    and so is a page whose characters cannot be measured: reading columns must never fail a page."""
    try:
        if page.get_rotation():
            return [], None
        runs = page_runs(textpage, raw)
        return runs, column_text(runs)
    except Exception as exc:
        log.warning("columns could not be read (%s); the page's text is kept as it is", exc)
        return [], None


def clean_pdfium_text(text: str) -> str:
    """PDFium ends lines with \\r\\n and marks soft hyphens and unmapped glyphs with control characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\x02", "-").replace("\ufffe", "-").replace("\x00", "").replace("\x0c", "\n")


def _may_hold_table(page: Any) -> bool:
    """True when the page draws at least two horizontal and two vertical rules (or boxes): the
    shapes pdfplumber's table finder needs. Pages of plain text skip pdfplumber entirely."""
    import pypdfium2.raw as pdfium_c

    horizontal = vertical = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=4):
        try:
            left, bottom, right, top = obj.get_bounds()
        except Exception:
            continue
        width, height = right - left, top - bottom
        if width >= 8 and height <= 3:
            horizontal += 1
        elif height >= 8 and width <= 3:
            vertical += 1
        elif width >= 8 and height >= 8:
            horizontal += 2
            vertical += 2
        if horizontal >= 2 and vertical >= 2:
            return True
    return False


def _plumber_page_text(page: Any, tables_writer: TableWriter) -> tuple[str, list[str], list[Box]]:
    """Text outside tables, each table as rows of ' | '-joined cells named by their column
    (ingestion/tables.py), so a cell stays on its page once, and the tables' boxes in PDF points
    (origin bottom left, as PDFium has them)."""
    tables = page.find_tables()
    if not tables:
        return "", [], []
    boxes = [table.bbox for table in tables]

    def outside_tables(obj: dict) -> bool:
        if obj.get("object_type") != "char":
            return True
        x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)

    text = page.filter(outside_tables).extract_text() or ""
    written = [rows for rows in (tables_writer.text(table.extract()) for table in tables) if rows]
    height = page.height
    points = [(x0, height - bottom, x1, height - top) for x0, top, x1, bottom in boxes]
    return text, written, points
