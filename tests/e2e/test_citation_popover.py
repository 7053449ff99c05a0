"""What a source chip's popover shows beside the snippet: for a text file, the passage highlighted
in the text around it; for a PDF, its page (a real index; the Streamlit page run by AppTest)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from core.schemas import Citation
from core.settings import PROJECT_ROOT, get_settings
from ragchat.application import open_session

POLICY = PROJECT_ROOT / "sample_docs" / "returns_policy.txt"
PLANS = PROJECT_ROOT / "sample_docs" / "nimbus_service_plans.pdf"


def page_captions(at: AppTest) -> list[str]:
    return [image.caption for element in at.get("image") for image in element.proto.imgs]


def _popover_app(citation_json: str) -> None:
    from core.schemas import Citation
    from ui.citations import render_citation

    render_citation(Citation.model_validate_json(citation_json), "test")


def test_a_text_citation_shows_its_passage_highlighted_in_the_surrounding_text(home: Path) -> None:
    session = open_session(get_settings())
    assert session.ingest_paths([POLICY])[0].status == "indexed"
    chunk = next(h.chunk for h in session.search("restocking fee for opened hardware", 3).hits)
    text = session.page_text(POLICY.name, 0)
    assert text is not None
    start = text.index("Opened hardware that is not defective")
    end = text.index("deducted from the refund.") + len("deducted from the refund.")
    assert chunk.char_start <= start < end <= chunk.char_end
    citation = Citation(
        marker=1,
        source=POLICY.name,
        chunk_id=chunk.chunk_id,
        locator=chunk.locator,
        snippet=text[start:end],
        char_start=start,
        char_end=end,
    )
    st.cache_resource.clear()
    at = AppTest.from_function(_popover_app, args=(citation.model_dump_json(),), default_timeout=120).run()
    assert not at.exception and not at.error
    shown = "".join(h.proto.body for h in at.get("html"))
    assert "<mark>Opened hardware that is not defective" in shown and "deducted from the refund.</mark>" in shown
    assert "Unopened hardware can be returned within 30 days" in shown  # the text before it
    assert not at.get("image")  # a text file has no page to show


def test_a_pdf_citation_shows_its_page(home: Path) -> None:
    session = open_session(get_settings())
    assert session.ingest_paths([PLANS])[0].status == "indexed"
    chunk = next(h.chunk for h in session.search("students discount", 5).candidates if h.chunk.page == 3)
    citation = Citation(
        marker=2,
        source=PLANS.name,
        page=3,
        chunk_id=chunk.chunk_id,
        locator=chunk.locator,
        snippet="Students get 20 percent off the Plus plan",
        char_start=chunk.char_start,
        char_end=chunk.char_end,
    )
    st.cache_resource.clear()
    at = AppTest.from_function(_popover_app, args=(citation.model_dump_json(),), default_timeout=120).run()
    assert not at.exception and not at.error
    assert len(at.get("image")) == 1
    assert page_captions(at) == ["Page 3 of 3, the cited passage highlighted"]
    assert at.button(key="page_view:test:previous").disabled is False
    assert at.button(key="page_view:test:next").disabled is True
    at.button(key="page_view:test:previous").click().run()
    assert page_captions(at) == ["Page 2 of 3"]
