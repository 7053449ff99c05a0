"""What every page shares: the one App per server process and the active user's Session of it,
calm error notices, formatting."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from core.settings import get_settings
from ragchat.application import App
from ragchat.session import Session

log = logging.getLogger("ragchat.app")


@st.cache_resource(show_spinner=False)
def get_app() -> App:
    """One App per server process: its models and index handles are shared by all sessions.

    The LLM starts loading in the background (seconds for a GGUF), so the first question does not
    wait for it; if loading fails, the first question reports why.
    """
    app = App(get_settings())
    threading.Thread(target=_preload_llm, args=(app,), name="llm-preload", daemon=True).start()
    return app


ACTIVE_USER = "user"  # session state: the canonical name of this session's user (None: the default user)


def get_user_session() -> Session:
    """The Session of this browser session's user (ui/user_panel.py sets the user): their memory,
    conversations and query log, on the process's shared models. Its documents' cards are written in
    the background (RAGCHAT_DOCUMENT_CARDS)."""
    session = get_app().session(st.session_state.get(ACTIVE_USER))
    if session.settings.document_cards:
        session.card_writer.start()
    return session


def _preload_llm(app: App) -> None:
    try:
        app.llm()
    except Exception:
        log.exception("preloading the LLM failed; the first question will report it")


FAILURE_ICON = ":material/error_outline:"
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]<>#|~$])")


def calm_notice(message: str) -> None:
    """A failure as one plain sentence in a notice: what did not work and why. Nothing was lost, so
    it is a warning, not an alarm; the traceback is in the server log."""
    st.warning(message, icon=FAILURE_ICON)


@contextmanager
def calm_errors(action: str) -> Iterator[None]:
    """Show a failure as a calm notice; the full traceback goes to the server log only.

    Streamlit's own rerun/stop signals derive from BaseException and pass through untouched.
    """
    try:
        yield
    except Exception as exc:
        log.exception("%s failed", action)
        calm_notice(f"{action} did not work: {exc}")


def escape_markdown(text: str) -> str:
    """Text from a file name or a document shown literally where Streamlit renders Markdown (labels)."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text)


def shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def duration(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"
