"""The sidebar's memory panel: what ragchat remembers about the session's user (USER_MEMORY.md) and
their company (COMPANY_MEMORY.md), what their last turn wrote with an Undo button, and a delete
button per entry."""

from __future__ import annotations

import hashlib

import streamlit as st

from core.schemas import MemoryUndo
from ragchat.session import Session

_LABELS = {"USER": "About you", "COMPANY": "About your company"}


def render_memory_panel(session: Session) -> None:
    memory = session.memory
    facts = memory.facts()
    count = len(facts.user) + len(facts.company)
    with st.expander(f"Memory ({count})", icon=":material/neurology:"):
        if notice := st.session_state.pop("memory_notice", None):
            st.info(notice)
        for target, entries in (("USER", facts.user), ("COMPANY", facts.company)):
            st.markdown(f"**{_LABELS[target]}** · `{memory.files[target].path.name}`")
            if target == "COMPANY" and session.user and session.settings.company_memory == "shared":
                st.caption("Shared by everyone who uses this ragchat.")
            if not entries:
                st.caption("Nothing yet.")
            for entry in entries:
                text_col, button_col = st.columns([5, 1], vertical_alignment="center")
                text_col.markdown(entry)
                key = "forget-" + hashlib.sha256(f"{target}:{entry}".encode()).hexdigest()[:12]
                if button_col.button("", icon=":material/delete:", type="tertiary", key=key, help="Forget this"):
                    removed = memory.forget(entry)
                    st.session_state.memory_notice = f"Forgot: {entry}" if removed else "That entry was already gone."
                    st.rerun()
        last = memory.last_turn()
        if last:
            st.markdown("**Last written**")
            for event in last:
                replaced = f"  \nin place of: {event.replaced}" if event.replaced else ""
                st.caption(
                    f"{event.action} · {event.target} · confidence {event.confidence:.2f} · "
                    f"{event.at:%Y-%m-%d %H:%M} UTC  \n{event.summary}{replaced}"
                )
            if st.button("Undo", icon=":material/undo:", key="memory-undo", help="Take back what this turn wrote"):
                st.session_state.memory_notice = undo_notice(memory.undo_last_turn())
                st.rerun()
        st.caption("Facts you state about yourself or your company are kept here; secrets never are.")


def undo_notice(undo: MemoryUndo) -> str:
    """What an undo did, in one notice: the lines taken back, and any it could not find."""
    parts = []
    for event in undo.undone:
        parts.append(f"Put back: {event.replaced}" if event.replaced else f"Removed: {event.summary}")
    for event in undo.not_found:
        parts.append(f"Not found (edited or deleted since): {event.summary}")
    return "  \n".join(parts) or "Nothing to undo."
