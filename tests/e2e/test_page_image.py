"""A cited PDF page as an image with the passage highlighted (ingestion/page_image.py), from the
PDF bytes the registry keeps with a version and the offsets stored with its chunks."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from core.schemas import doc_id_for
from core.settings import PROJECT_ROOT, get_settings
from ingestion.page_image import HIGHLIGHT_RGBA, cleaned_with_origins
from ingestion.parsers import clean_pdfium_text
from ragchat.application import open_session
from tests.fixtures import scanned_pdf_bytes

PLANS = PROJECT_ROOT / "sample_docs" / "nimbus_service_plans.pdf"


def highlighted_pixels(png: bytes) -> int:
    """Pixels tinted by the highlight: yellow, i.e. much more red and green than blue."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if r > 200 and g > 170 and b < 150)


def test_cleaning_keeps_each_characters_origin() -> None:
    raw = "Plan\r\nBasic\x00 costs\x02\r\n5 \ufffeEUR\x0cend\rx"
    cleaned, origins = cleaned_with_origins(raw)
    assert cleaned == clean_pdfium_text(raw)
    assert len(origins) == len(cleaned)
    for char, origin in zip(cleaned, origins, strict=True):
        assert raw[origin] == char or (raw[origin], char) in {
            ("\r", "\n"),
            ("\x02", "-"),
            ("\ufffe", "-"),
            ("\x0c", "\n"),
        }


def test_a_cited_pdf_page_is_shown_with_the_passage_highlighted(home: Path, tmp_path: Path) -> None:
    session = open_session(get_settings())
    redacted = tmp_path / "redacted_plans.pdf"
    redacted.write_bytes(PLANS.read_bytes() + b"\n")  # another version's bytes, indexed with redaction
    notes = PROJECT_ROOT / "sample_docs" / "returns_policy.txt"
    assert [r.status for r in session.ingest_paths([PLANS, notes])] == ["indexed", "indexed"]
    assert session.ingest_paths([redacted], redact=True)[0].status == "indexed"

    def cited(query: str, page: int) -> tuple[int, tuple[int, int], str]:
        hits = session.search(query, 10).candidates
        chunk = next(h.chunk for h in hits if h.chunk.source == PLANS.name and h.chunk.page == page)
        return chunk.page, (chunk.char_start, chunk.char_start + min(len(chunk.text), 120)), chunk.text

    # Page 3 is plain text: the stored offsets index PDFium's own characters.
    page, span, text = cited("students discount on the Plus plan", 3)
    shown = session.page_image(PLANS.name, page, span)
    assert shown is not None and shown.highlighted and (shown.number, shown.pages) == (3, 3)
    raw = pdfium.PdfDocument(PLANS.read_bytes())[page - 1].get_textpage().get_text_range()
    assert cleaned_with_origins(raw)[0][span[0] : span[1]] == text[: span[1] - span[0]]
    plain = session.page_image(PLANS.name, page)
    assert plain is not None and not plain.highlighted and highlighted_pixels(plain.png) == 0
    short = session.page_image(PLANS.name, page, (span[0], span[0] + 30))
    assert short is not None and 0 < highlighted_pixels(short.png) < highlighted_pixels(shown.png)
    # With the citation's snippet, only the snippet's words inside the passage are marked.
    narrowed = session.page_image(PLANS.name, page, span, passage=text[40:70])
    assert narrowed is not None and 0 < highlighted_pixels(narrowed.png) < highlighted_pixels(shown.png)
    # Page 2 holds a table read by pdfplumber ("a | b" rows): the passage's words are found on the page.
    page, span, _ = cited("Pro plan 9.99 EUR monthly price, annual price", 2)
    table = session.page_image(PLANS.name, page, span)
    assert table is not None and table.highlighted and highlighted_pixels(table.png) > 0
    row = session.page_image(PLANS.name, page, span, passage="Plan | Monthly price | Annual price")  # one row
    assert row is not None and 0 < highlighted_pixels(row.png) < highlighted_pixels(table.png)
    # Without offsets (an older citation) the snippet's words are looked up.
    found = session.page_image(PLANS.name, 3, passage="Students get 20 percent off")
    assert found is not None and found.highlighted
    assert HIGHLIGHT_RGBA[3] < 255  # see-through: the text under it stays legible

    with pytest.raises(IndexError):
        session.page_image(PLANS.name, 4)
    assert session.page_image(notes.name, 0) is None  # a text file has no pages
    assert session.page_image(redacted.name, 1) is None  # its page images would show what was redacted
    registry = session.document_index.registry
    version = registry.get(doc_id_for(PLANS.name)).content_hash  # type: ignore[union-attr]
    assert session.delete(PLANS.name)
    assert registry.original(doc_id_for(PLANS.name), version) is None  # gone with its version


def test_a_scanned_page_highlights_the_words_tesseract_reads(home: Path) -> None:
    session = open_session(get_settings())
    lines = ["Pallet audit passed on Friday", "Forklift keys stay in the office"]
    result = session.ingest_bytes("scan.pdf", scanned_pdf_bytes(lines))
    assert result.status == "indexed" and result.ocr_pages == [1], result
    text = session.page_text("scan.pdf", 1)
    assert text is not None and "Forklift keys" in text
    start = text.index("Forklift keys")
    shown = session.page_image("scan.pdf", 1, (start, start + len("Forklift keys stay")))
    assert shown is not None and shown.highlighted and highlighted_pixels(shown.png) > 0
    plain = session.page_image("scan.pdf", 1)
    assert plain is not None and not plain.highlighted
