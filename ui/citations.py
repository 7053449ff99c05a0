"""Citation chips under an answer: one per cited source, labelled "[n] file · p. N". Clicking a chip
opens the passage it points to (file, page, section, the supporting sentence) in a popover, so a
claim is checked without leaving the answer. A PDF's popover shows the page itself with the passage
highlighted, and buttons to the previous and next page; a text file's shows the passage highlighted
in its surrounding text."""

from __future__ import annotations

import html

import streamlit as st

from core.schemas import Citation
from ingestion.page_image import PageImage
from rag.citations import citation_note
from ragchat.session import Session
from ui.common import escape_markdown, get_user_session, shorten

CHIP_ICON = ":material/description:"
CONTEXT_CHARS = 400  # of a text file, shown on each side of the passage
PAGE_WIDTH_PX = 560  # a cited page's width in the popover: wide enough to read body text


def chip_label(citation: Citation) -> str:
    """[n] file · p. 2 (or the section for a text file); the character range stays in the popover."""
    where = [part for part in citation.locator.split(" · ") if not part.startswith("chars ")]
    text = shorten(" · ".join([citation.source, *where[:1]]), 60)
    return f"\\[{citation.marker}\\] {escape_markdown(text)}"


def render_citation(citation: Citation, key: str = "") -> None:
    """The popover's content: where the passage is, how it was attributed, its text, and where it
    stands: the PDF page, or the text around it."""
    st.markdown(f"**{escape_markdown(citation.source)}** — {escape_markdown(citation.locator)}")
    if note := citation_note(citation):
        st.caption(note[0].upper() + note[1:] + ".")
    else:
        st.caption("Cited by the model itself.")
    st.markdown(blockquote(citation.snippet))
    session = get_user_session()
    if citation.page:
        render_page(session, citation, key)
    else:
        render_text_context(session, citation)


def render_citation_chips(citations: list[Citation], key: str = "") -> None:
    """The chips, in the current (horizontal) container; `key` tells apart the answers on the page."""
    for citation in citations:
        with st.popover(chip_label(citation), icon=CHIP_ICON, help="Show the passage"):
            render_citation(citation, f"{key}:{citation.marker}")


@st.fragment
def render_page(session: Session, citation: Citation, key: str) -> None:
    """The cited page with the passage highlighted; Previous / Next turn the page (no highlight).
    A fragment, so turning a page reruns only this and the popover stays open."""
    version = session.document_version(citation.source)
    if version is None or not citation.page:
        return
    state = f"page_view:{key}"
    number = st.session_state.get(state, citation.page)
    cited = number == citation.page
    start, end = citation.char_start, citation.char_end
    span = (start, end) if cited and start is not None and end is not None else None
    try:
        shown = _page_image(session, citation.source, version, number, span, citation.snippet if cited else "")
    except IndexError:
        st.session_state.pop(state, None)
        return
    if shown is None:  # no PDF kept: redacted, encrypted, or indexed before pages were kept
        return
    caption = f"Page {number} of {shown.pages}"
    if cited:
        caption += ", the cited passage highlighted" if shown.highlighted else " (the passage could not be located)"
    st.image(shown.png, caption=caption, width=PAGE_WIDTH_PX)
    previous, following = st.columns(2)
    previous.button(
        "Previous page", key=f"{state}:previous", disabled=number <= 1, on_click=_turn, args=(state, number - 1)
    )
    following.button(
        "Next page", key=f"{state}:next", disabled=number >= shown.pages, on_click=_turn, args=(state, number + 1)
    )


def _turn(state: str, number: int) -> None:
    st.session_state[state] = number


@st.cache_data(max_entries=64, show_spinner=False)
def _page_image(
    _session: Session, source: str, version: str, page: int, span: tuple[int, int] | None, passage: str
) -> PageImage | None:
    """One rendered page, cached per document version, page and highlight (rendering takes ~0.1 s)."""
    return _session.page_image(source, page, span, passage)


def render_text_context(session: Session, citation: Citation) -> None:
    """A text file's passage highlighted in the text around it."""
    text = session.page_text(citation.source, 0)
    if not text or citation.char_start is None or citation.char_end is None:
        return
    start, end = citation.char_start, citation.char_end
    before = text[max(0, start - CONTEXT_CHARS) : start]
    after = text[end : end + CONTEXT_CHARS]
    parts = [
        "…" if start > CONTEXT_CHARS else "",
        html.escape(before),
        f"<mark>{html.escape(text[start:end])}</mark>",
        html.escape(after),
        "…" if end + CONTEXT_CHARS < len(text) else "",
    ]
    st.html(f'<div class="ragchat-context" style="white-space: pre-wrap; font-size: 0.9em">{"".join(parts)}</div>')


def blockquote(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""])
