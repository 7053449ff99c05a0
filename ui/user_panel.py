"""Who is using the app, at the top of the sidebar on every page.

Without RAGCHAT_USER_HEADER the sidebar has a user name field (empty: the default user, i.e. a
single-user install's data). It keeps people's memories, conversations and logs apart; it does not
authenticate anyone, since anyone can type any name. Behind a sign-in proxy, RAGCHAT_USER_HEADER names
the request header that carries the signed-in user: the app takes the user from it, shows it read-only,
and a request without it sees a message and nothing else.
"""

from __future__ import annotations

import streamlit as st

from core.users import USER_NAME_RULE, InvalidUserName, MissingUserHeader, user_from_headers, user_name
from ui.common import ACTIVE_USER, calm_notice, get_app

FIELD = "user_field"
# What a session holds for the user on screen; dropped when the user changes, so the next user never
# sees (or continues) the previous one's conversation or ingests.
_PER_USER_STATE = (
    "messages",
    "session_id",
    "conversation_picker",
    "ingest_jobs",
    "ingest_jobs_done",
    "notice",
    "memory_notice",
    "logs_page",
)


def render_user() -> str | None:
    """The active user (None: the default user), after drawing the sidebar's user part. In header
    mode a request without a valid user header ends here, with the reason."""
    try:
        settings = get_app().settings
    except Exception:  # the page says why the session could not start, and shows no data
        return None
    if settings.user_header:
        try:
            name = user_from_headers(st.context.headers, settings.user_header)
        except (MissingUserHeader, InvalidUserName) as exc:
            st.error(str(exc), icon=":material/lock:")
            st.stop()
        _activate(name)
        st.sidebar.markdown(f":material/person: Signed in as **{name}**")
        return name
    st.session_state.setdefault(ACTIVE_USER, None)
    st.session_state.setdefault(FIELD, st.session_state[ACTIVE_USER] or "")
    user = st.session_state[ACTIVE_USER]
    # A popover, not an expander: one quiet line at the top of the sidebar until someone opens it.
    with st.sidebar.popover(f"User: {user or 'default'}", icon=":material/person:", type="tertiary"):
        if notice := st.session_state.pop("user_notice", None):
            calm_notice(notice)
        st.text_input(
            "User name",
            key=FIELD,
            placeholder="default",
            on_change=_switch_user,
            help=f"Each user has their own memory, conversations and query log. {USER_NAME_RULE}. "
            "Empty: the default user.",
        )
    return user


def _switch_user() -> None:
    """The field changed: switch to the name typed, or keep the current user and say why not."""
    current = st.session_state.get(ACTIVE_USER)
    try:
        name = user_name(st.session_state[FIELD])
    except InvalidUserName as exc:
        st.session_state.user_notice = f"{exc}. Still using {current or 'the default user'}."
        st.session_state[FIELD] = current or ""
        return
    st.session_state[FIELD] = name or ""
    _activate(name)


def _activate(name: str | None) -> None:
    if ACTIVE_USER in st.session_state and st.session_state[ACTIVE_USER] != name:
        for key in _PER_USER_STATE:
            st.session_state.pop(key, None)
    st.session_state[ACTIVE_USER] = name
