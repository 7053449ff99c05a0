"""Citation chips under an answer: one per cited source, labelled "[n] file · p. N". Clicking a chip
opens the passage it points to (file, page, section, the supporting sentence) in a popover, so a
claim is checked without leaving the answer."""

from __future__ import annotations

import streamlit as st

from core.schemas import Citation
from rag.citations import citation_note
from ui.common import escape_markdown, shorten

CHIP_ICON = ":material/description:"


def chip_label(citation: Citation) -> str:
    """[n] file · p. 2 (or the section for a text file); the character range stays in the popover."""
    where = [part for part in citation.locator.split(" · ") if not part.startswith("chars ")]
    text = shorten(" · ".join([citation.source, *where[:1]]), 60)
    return f"\\[{citation.marker}\\] {escape_markdown(text)}"


def render_citation(citation: Citation) -> None:
    """The popover's content: where the passage is, how it was attributed, and its text."""
    st.markdown(f"**{escape_markdown(citation.source)}** — {escape_markdown(citation.locator)}")
    if note := citation_note(citation):
        st.caption(note[0].upper() + note[1:] + ".")
    else:
        st.caption("Cited by the model itself.")
    st.markdown(blockquote(citation.snippet))


def render_citation_chips(citations: list[Citation]) -> None:
    """The chips, in the current (horizontal) container."""
    for citation in citations:
        with st.popover(chip_label(citation), icon=CHIP_ICON, help="Show the passage"):
            render_citation(citation)


def blockquote(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""])
