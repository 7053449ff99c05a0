"""The Logs page: the query log (rag/query_log.py) as a paginated table, newest first, with guardrail
outcomes in colour, and one entry's retrieval, citations and per-stage timings in full."""

from __future__ import annotations

import logging
import math

import pandas as pd
import streamlit as st

from core.schemas import QueryLogEntry
from ui.common import calm_errors, duration, get_user_session, shorten

log = logging.getLogger("ragchat.app")

PAGE_SIZE = 25
# Background per outcome: stopped by a guardrail stands out, a refusal or weak answer less so.
OUTCOME_COLOURS = {
    "stopped: injection": "#f8d7da",
    "stopped: rate limit": "#ffe5b4",
    "stopped: length": "#ffe5b4",
    "refused": "#e2e3e5",
    "low confidence": "#fff3cd",
    "answered": "#d1e7dd",
}


def outcome(entry: QueryLogEntry) -> str:
    if entry.guardrail:
        return f"stopped: {entry.guardrail.replace('_', ' ')}"
    if entry.refused:
        return "refused"
    return "low confidence" if entry.low_confidence else "answered"


def _row(entry: QueryLogEntry) -> dict[str, object]:
    return {
        "#": entry.id,
        "time (UTC)": entry.at.strftime("%Y-%m-%d %H:%M:%S"),
        "outcome": outcome(entry),
        "question": shorten(entry.question, 120),
        "answer": shorten(entry.answer, 160),
        "confidence": entry.confidence,
        "unsupported": entry.unsupported,
        "cited": ", ".join(f"{c.source} p. {c.page}" if c.page else c.source for c in entry.citations),
        "latency s": round(entry.timings_ms.get("total_ms", 0.0) / 1000, 2),
        "session": entry.session_id or "",
    }


def _colour(row: pd.Series) -> list[str]:
    colour = OUTCOME_COLOURS.get(str(row["outcome"]), "")
    return [f"background-color: {colour}; color: #1f2328" if colour and name == "outcome" else "" for name in row.index]


def render_entry(entry: QueryLogEntry) -> None:
    """One entry in full: what was searched, every candidate with its scores, citations, stage timings."""
    st.markdown(f"**Question:** {entry.question}")
    if entry.search_query != entry.question:
        st.markdown(f"**Searched for:** {entry.search_query}")
    st.markdown(f"**Answer:** {entry.answer}")
    stages = " · ".join(
        f"{name.removesuffix('_ms')} {duration(ms)}" for name, ms in entry.timings_ms.items() if name.endswith("_ms")
    )
    st.caption(f"Stages: {stages}")
    st.caption(f"Models: LLM {entry.models.llm} · embedder {entry.models.embedder} · reranker {entry.models.reranker}")
    if entry.retrieved:
        st.dataframe(
            [
                {
                    "chunk id": chunk.chunk_id,
                    "source": f"{chunk.source} p. {chunk.page}" if chunk.page else chunk.source,
                    "in prompt": chunk.given,
                    "cosine": chunk.scores.dense,
                    "BM25": chunk.scores.bm25,
                    "fused": chunk.scores.fused,
                    "rerank": chunk.scores.rerank,
                }
                for chunk in entry.retrieved
            ],
            hide_index=True,
            width="stretch",
        )
    for c in entry.citations:
        st.markdown(f"[{c.marker}] {c.source} — {c.locator}: “{c.snippet}”")


def render() -> None:
    st.title("Query log")
    st.caption(
        "Every question you asked in the app or with `ragchat ask`, newest first (each user sees their own). "
        "Emails, phone numbers, card "
        "numbers, IP addresses and secrets were masked before anything was written."
    )
    try:
        session = get_user_session()
    except Exception as exc:
        log.exception("starting the session failed")
        st.error(f"ragchat could not start: {exc}")
        return
    with calm_errors("Reading the query log"):
        total = session.query_log.count()
        if not total:
            st.info("No questions yet. Ask one on the Chat page and it appears here.")
            return
        pages = math.ceil(total / PAGE_SIZE)
        page = min(st.session_state.get("logs_page", 1), pages)
        entries = session.query_log.entries(limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        first = (page - 1) * PAGE_SIZE + 1
        st.caption(f"Entries {first}–{first + len(entries) - 1} of {total}.")
        table = pd.DataFrame([_row(e) for e in entries])
        st.dataframe(
            table.style.apply(_colour, axis=1),
            hide_index=True,
            width="stretch",
            column_config={"confidence": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="%.2f")},
        )
        st.pagination(pages, key="logs_page")
        chosen = st.selectbox(
            "Entry details",
            entries,
            format_func=lambda e: f"#{e.id} · {outcome(e)} · {shorten(e.question, 60)}",
        )
        if chosen is not None:
            with st.container(border=True):
                render_entry(chosen)
