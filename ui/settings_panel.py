"""The sidebar's settings panel and model status.

Settings: the answering model (the packaged GGUFs that are installed, and Ollama's models when a
server answers; switching goes through App.use_llm and applies to the whole app), and the
retrieval controls kept per browser session and sent with each question (BM25 weight, top k,
reranker on/off). The status line says which models run and whether the LLM is loaded, loading or
failed, and why.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import streamlit as st

from core.schemas import LLMChoice, LLMOption, LLMState, LLMStatus
from rag.answerability import level_rates
from ragchat.session import Session
from ui.common import FAILURE_ICON, calm_notice, escape_markdown

log = logging.getLogger("ragchat.app")

TOP_K_MAX = 10
STRICTNESS_LEVELS = ["lenient", "balanced", "strict"]
STATUS_POLL_S = 2  # while the model loads, the status line refreshes itself this often
# (text, color, icon) of the model's status line; the colors are among those st.badge takes.
_BADGES: dict[LLMState, tuple[str, Literal["green", "orange", "gray", "red"], str]] = {
    "ready": ("Ready", "green", ":material/check_circle:"),
    "loading": ("Loading…", "orange", ":material/hourglass_top:"),
    "not loaded": ("Not loaded yet", "gray", ":material/pending:"),
    "failed": ("Not available", "red", FAILURE_ICON),
}


_WIDGET_KEYS = ("llm_choice", "bm25_weight", "top_k", "rerank", "strictness")


def keep_settings() -> None:
    """Keep this session's settings through a run that does not draw them (another page, a failed
    panel). Streamlit drops the state of a widget a finished run did not draw, and the controls then
    came back at their defaults; a value set through session state before the widget is drawn is
    kept (Streamlit's documented way to keep widget state across pages)."""
    for key in _WIDGET_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def init_settings(session: Session) -> None:
    st.session_state.setdefault("bm25_weight", session.settings.bm25_weight)
    st.session_state.setdefault("top_k", max(1, min(session.settings.top_k, TOP_K_MAX)))
    st.session_state.setdefault("rerank", True)
    st.session_state.setdefault("strictness", session.settings.strictness)


def retrieval_options() -> dict[str, Any]:
    """This session's retrieval and answering settings, as AskOptions takes them."""
    return {
        "bm25_weight": st.session_state.bm25_weight,
        "rerank": st.session_state.rerank,
        "top_k": st.session_state.top_k,
        "strictness": st.session_state.strictness or None,  # a cleared control: the setting's level
    }


def render_settings(session: Session) -> None:
    with st.expander("Settings", icon=":material/tune:"):
        if notice := st.session_state.pop("settings_notice", None):
            calm_notice(notice)
        render_model_choice(session)
        render_retrieval_settings(session)
        render_answer_settings(session)


def render_model_choice(session: Session) -> None:
    """A select box of the models that can answer; choosing one loads it (seconds) for everyone.

    Only the person's own change of the box switches the model (its on_change flag). The box's value
    alone never does: Streamlit drops a widget's state when a run does not draw it, and the box then
    falls back to its first option, which would have loaded another model for every user."""
    options = session.app.llm_options()
    status = session.app.llm_status()
    usable = {o.key: o for o in options if o.available}
    keys = list(usable) if status.key in usable or not status.key else [status.key, *usable]
    # The model is one per server process, so another tab may have switched it: follow it.
    if st.session_state.get("llm_seen") != status.key or st.session_state.get("llm_choice") not in keys:
        st.session_state.llm_seen = status.key
        if status.key in keys:
            st.session_state.llm_choice = status.key
    chosen = st.selectbox(
        "Answering model",
        keys,
        format_func=lambda key: usable[key].label if key in usable else f"{status.label} (not available)",
        key="llm_choice",
        on_change=_note_model_chosen,
        help="Applies to everyone using this app. Loading a model takes a few seconds.",
    )
    for option in options:
        if not option.available:
            st.caption(f"{option.model}: {option.hint}")
    chosen_by_person = st.session_state.pop("llm_chosen_by_person", False)
    if chosen_by_person and chosen and chosen != status.key and chosen in usable:
        switch_model(session, usable[chosen], status)


def _note_model_chosen() -> None:
    st.session_state.llm_chosen_by_person = True


def switch_model(session: Session, option: LLMOption, current: LLMStatus) -> None:
    with st.spinner(f"Loading {option.model}…"):
        try:
            session.app.use_llm(LLMChoice(provider=option.provider, model=option.model))
        except Exception as exc:
            log.exception("switching to %s failed", option.key)
            st.session_state.settings_notice = (
                f"Could not switch to {option.model}: {exc}. Still answering with {current.label}."
            )
            st.session_state.llm_seen = None  # the select box goes back to the model in use
    st.rerun()


def render_retrieval_settings(session: Session) -> None:
    st.markdown("**Retrieval**")
    st.slider(
        "Keyword (BM25) weight",
        min_value=0.0,
        max_value=1.0,
        step=0.05,
        key="bm25_weight",
        help="Share of keyword matching in the ranking: 0 uses meaning (embeddings) only, 1 keywords only.",
    )
    st.slider(
        "Passages given to the model (top k)",
        min_value=1,
        max_value=TOP_K_MAX,
        key="top_k",
        help="More passages can answer broader questions; each one makes the prompt longer, so the "
        "answer starts later. Passages beyond the prompt's token budget are left out.",
    )
    label = session.models().reranker
    if label.startswith("none"):
        # Shown off and disabled, never as a switched-on control that does nothing.
        st.toggle("Rerank with the cross-encoder", value=False, disabled=True, key="rerank_unavailable")
        st.caption(f"Reranker: {label}")
    else:
        st.toggle("Rerank with the cross-encoder", key="rerank", help=label)


def render_answer_settings(session: Session) -> None:
    st.markdown("**Answering**")
    st.segmented_control(
        "Refusal strictness",
        STRICTNESS_LEVELS,
        key="strictness",
        format_func=str.capitalize,
        help="How readily an answer is withheld when your documents may not state it. Lenient answers more "
        "and refuses fewer answerable questions; strict refuses more of the questions the documents don't "
        "answer. " + strictness_rates(session.app.llm_status().label, session.settings.answerability_check),
    )


def strictness_rates(model_label: str, checking: bool) -> str:
    """What each level gave on held-out calibration questions for this model, in one sentence."""
    rates = level_rates(model_label, checking)
    if rates is None:
        return f"{model_label} is not calibrated: the levels use default thresholds."
    parts = [
        f"{level}: refuses {r.refusal:.0%} of unanswerable, {r.false_refusal:.0%} of answerable"
        for level, r in rates.items()
    ]
    return f"Measured for {model_label} on held-out questions — " + "; ".join(parts) + "."


def render_model_status(session: Session) -> None:
    """The models that run; while the LLM loads, the line refreshes itself until it is ready."""
    if session.app.llm_status().state in ("loading", "not loaded"):
        st.fragment(_model_status, run_every=STATUS_POLL_S)(session)
    else:
        _model_status(session)


def _model_status(session: Session) -> None:
    st.subheader("Models")
    status = session.app.llm_status()
    text, color, icon = _BADGES[status.state]
    st.badge(text, icon=icon, color=color)
    info = session.models()
    st.markdown(
        f"**LLM:** {status.label}  \n**Embedder:** {info.embedder}  \n**Reranker:** {info.reranker}  \n"
        f"**Vector store:** {escape_markdown(info.vector_store)}"
    )
    if status.fallback:
        st.caption(status.fallback)
    if status.error:
        st.caption(f"The model could not be loaded: {status.error}")
