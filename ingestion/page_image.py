"""A PDF page as an image, with a cited passage highlighted: what a source chip shows for a PDF.

The passage is found from the character offsets stored with its chunk: they index the page's text as
ingest kept it, which is PDFium's text with line ends and control characters cleaned
(parsers.clean_pdfium_text). Replaying that cleaning with each character's origin gives PDFium's own
character index, hence its box on the page. When the stored text is not PDFium's (a ruled page read by
pdfplumber, its table rows joined by " | "), the passage's words are looked up in PDFium's text
instead; when neither finds it (an OCR page has no text layer), the page is shown without a
highlight, and says so.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

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
    words = [word for word in passage.split() if word != "|"]  # a table row's cells are joined by " | "
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
) -> PageImage:
    """Page `number` (1-based) as PNG bytes with a passage highlighted: `span` (offsets in the stored
    page text), narrowed to the words of `passage` when they are inside it; without a span, the
    words of `passage` wherever they are on the page. IndexError for a page it does not have."""
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
            boxes = _passage_boxes(textpage, stored_text, span, passage)
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


def _passage_boxes(
    textpage: object, stored_text: str | None, span: tuple[int, int] | None, passage: str
) -> list[tuple[float, float, float, float]]:
    raw = textpage.get_text_range()  # type: ignore[attr-defined]
    cleaned, origins = cleaned_with_origins(raw)
    found: tuple[int, int] | None = None
    if span is not None and stored_text is not None and 0 <= span[0] < span[1] <= len(stored_text):
        # The supporting sentence (the citation's snippet) inside the cited passage, when it is there.
        inner = _find_words(stored_text[span[0] : span[1]], passage) if passage else None
        if inner is not None:
            span = (span[0] + inner[0], span[0] + inner[1])
        if stored_text == cleaned:
            found = span
        else:  # pdfplumber's text of a ruled page: look the passage's words up in PDFium's
            passage = stored_text[span[0] : span[1]]
    if found is None and passage:
        found = _find_words(cleaned, passage)
    if found is None:
        return []
    lines: list[list[float]] = []  # one box per line: characters in reading order, merged
    for index in range(*found):
        if cleaned[index].isspace():
            continue
        left, bottom, right, top = textpage.get_charbox(origins[index])  # type: ignore[attr-defined]
        if right <= left or top <= bottom:
            continue
        line = lines[-1] if lines else None
        if line is not None and line[1] <= (bottom + top) / 2 <= line[3] and left >= line[0]:
            line[1], line[2], line[3] = min(line[1], bottom), max(line[2], right), max(line[3], top)
        else:
            lines.append([left, bottom, right, top])
    return [(left, bottom, right, top) for left, bottom, right, top in lines]
