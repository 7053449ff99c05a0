"""ragchat's Streamlit app: the page list. The pages live in `ui/`; every action goes through a ragchat Session.

Run with `streamlit run app.py` (or `ragchat ui`).
"""

from __future__ import annotations

import streamlit as st

from ui import chat_page, eval_page, logs_page, weather_page
from ui.settings_panel import keep_settings
from ui.user_panel import render_user

st.set_page_config(page_title="ragchat", page_icon="📄", layout="wide")
pages = [
    st.Page(chat_page.render, title="Chat", icon=":material/chat:", url_path="chat", default=True),
    st.Page(weather_page.render, title="Weather", icon=":material/partly_cloudy_day:", url_path="weather"),
    st.Page(logs_page.render, title="Logs", icon=":material/receipt_long:", url_path="logs"),
    st.Page(eval_page.render, title="Evaluation", icon=":material/analytics:", url_path="eval"),
]
navigation = st.navigation(pages)
render_user()  # this session's user; behind a sign-in proxy, a request without its header stops here
keep_settings()  # the chat page's settings survive a visit to another page
navigation.run()
