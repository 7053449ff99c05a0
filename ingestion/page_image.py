"""A PDF page as an image, with a cited passage highlighted: what a source chip shows for a PDF.

The passage is found from the character offsets stored with its chunk: they index the page's text as
ingest kept it, which is PDFium's text with line ends and control characters cleaned
(parsers.clean_pdfium_text). Replaying that cleaning with each character's origin gives PDFium's own
character index, hence its box on the page. When the stored text is not PDFium's (a ruled page read by
pdfplumber, its table rows joined by " | "), the passage's words are looked up in PDFium's text
instead. A page without a text layer (a scan) was read by Tesseract: it reads the page again for
its words' boxes (ingest kept only the text), and the passage's words are marked. When nothing
finds the passage, the page is shown without a highlight, and says so.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from typing import Any

from ingestion.ocr import OcrError, Tesseract
from ingestion.running_lines import keeps_offsets
from ingestion.tables import without_labels

log = logging.getLogger(__name__)

_REPLACED = {"\r": "\n", "\x02": "-", "\ufffe": "-", "\x0c": "\n"}
HIGHLIGHT_RGBA = (255, 213, 0, 110)  # a marker-pen yellow, see-through


@dataclass(frozen=True)
class PageImage:
    png: bytes
    number: int  # 1-based
    pages: int
    highlighted: bool


def cleaned_with_origins(raw: str) -> tuple[str, list[int]]:
    """PDFium's page text cleaned as ingest cleans it, and for each kept character its index in `raw`
    (PDFium's character index on the page)."""
    out: list[str] = []
    origins: list[int] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\r" and raw[index + 1 : index + 2] == "\n":
            out.append("\n")
            origins.append(index)
            index += 2
            continue
        if char != "\x00":
            out.append(_REPLACED.get(char, char))
            origins.append(index)
        index += 1
    return "".join(out), origins


def _find_words(haystack: str, passage: str) -> tuple[int, int] | None:
    """Where the passage's text sits in `haystack`, whatever the whitespace (or table cell
    separators) between its words."""
    # A table row's cells are joined by " | " and named by their column (ingestion/tables.py), which
    # the page does not print beside each cell: the bare cells are looked for.
    words = [word for word in without_labels(passage).split() if word != "|"]
    if not words:
        return None
    pattern = r"[\s|]+".join(re.escape(word) for word in words)
    found = re.search(pattern, haystack)
    return (found.start(), found.end()) if found else None


def render_page(
    pdf: bytes,
    number: int,
    scale: float,
    stored_text: str | None = None,
    span: tuple[int, int] | None = None,
    passage: str = "",
    ocr: Tesseract | None = None,
) -> PageImage:
    """Page `number` (1-based) as PNG bytes with a passage highlighted: `span` (offsets in the stored
    page text), narrowed to the words of `passage` when they are inside it; without a span, the
    words of `passage` wherever they are on the page. A page without a text layer is read again
    by `ocr` for its words' boxes. IndexError for a page it does not have."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    document = pdfium.PdfDocument(pdf)
    try:
        pages = len(document)
        if not 1 <= number <= pages:
            raise IndexError(f"the document has {pages} pages, not a page {number}")
        page = document[number - 1]
        textpage = page.get_textpage()
        try:
            boxes = _passage_boxes(page, textpage, stored_text, span, passage, ocr)
            height = page.get_height()
            image = page.render(scale=scale).to_pil().convert("RGBA")
        finally:
            textpage.close()
            page.close()
    finally:
        document.close()
    if boxes:
        overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        for left, bottom, right, top in boxes:
            draw.rectangle(
                [left * scale, (height - top) * scale, right * scale, (height - bottom) * scale],
                fill=(*HIGHLIGHT_RGBA[:3], 255),
            )
        alpha = overlay.getchannel("A").point(lambda a: HIGHLIGHT_RGBA[3] if a else 0)
        overlay.putalpha(alpha)
        image = Image.alpha_composite(image, overlay)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG", optimize=True)
    return PageImage(png=buffer.getvalue(), number=number, pages=pages, highlighted=bool(boxes))


Box = tuple[float, float, float, float]  # left, bottom, right, top in PDF points


def _passage_boxes(
    page: Any,  # pypdfium2's PdfPage and PdfTextPage: the library has no type annotations
    textpage: Any,
    stored_text: str | None,
    span: tuple[int, int] | None,
    passage: str,
    ocr: Tesseract | None,
) -> list[Box]:
    raw = textpage.get_text_range()
    cleaned, origins = cleaned_with_origins(raw)
    found: tuple[int, int] | None = None
    if span is not None and stored_text is not None and 0 <= span[0] < span[1] <= len(stored_text):
        # The supporting sentence (the citation's snippet) inside the cited passage, when it is there.
        inner = _find_words(stored_text[span[0] : span[1]], passage) if passage else None
        if inner is not None:
            span = (span[0] + inner[0], span[0] + inner[1])
        if keeps_offsets(stored_text, cleaned):  # PDFium's text, its running lines blanked or not
            found = span
        else:  # pdfplumber's or Tesseract's text: look the passage's words up on the page
            passage = stored_text[span[0] : span[1]]
    if not cleaned.strip() and ocr is not None and ocr.available and passage:
        try:
            return _merged(_ocr_boxes(page, passage, ocr))
        except OcrError as exc:  # the page is still shown, without its highlight
            log.warning("could not read the words of a scanned page again: %s", exc)
            return []
    if found is None and passage:
        found = _find_words(cleaned, passage)
    if found is None:
        return []
    boxes = [textpage.get_charbox(origins[i]) for i in range(*found) if not cleaned[i].isspace()]
    return _merged(boxes)


def _ocr_boxes(page: Any, passage: str, ocr: Tesseract) -> list[Box]:
    """A page without a text layer: the boxes of the words Tesseract reads there that make up the passage."""
    words = ocr.word_boxes(page)
    joined, starts = "", []
    for word, *_ in words:
        starts.append(len(joined))
        joined += word + " "
    found = _find_words(joined, passage)
    if found is None:
        return []
    return [
        (left, bottom, right, top)
        for start, (word, left, bottom, right, top) in zip(starts, words, strict=True)
        if found[0] < start + len(word) and start < found[1]
    ]


def _merged(boxes: list[Box]) -> list[Box]:
    """Boxes in reading order merged into one per line."""
    lines: list[list[float]] = []
    for left, bottom, right, top in boxes:
        if right <= left or top <= bottom:
            continue
        line = lines[-1] if lines else None
        if line is not None and line[1] <= (bottom + top) / 2 <= line[3] and left >= line[0]:
            line[1], line[2], line[3] = min(line[1], bottom), max(line[2], right), max(line[3], top)
        else:
            lines.append([left, bottom, right, top])
    return [(left, bottom, right, top) for left, bottom, right, top in lines]
