"""The Streamlit pages and panels; `app.py` composes them. Presentation only: every action goes
through ragchat.session.Session."""
