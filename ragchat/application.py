"""The process-wide part of ragchat: one App per process (a Streamlit server, a CLI call, a test).

It owns what every user shares: the settings, the models (one llama.cpp instance, the embedders, one
reranker: ragchat/process_models.py), the shared document index, and one Session per user, made on
first use and kept. Heavy parts are built on first use, so `ragchat docs` loads no model at all.
"""

from __future__ import annotations

import threading
from functools import cached_property

from core.settings import Settings
from core.user_space import UserSpace, user_space
from core.users import user_name
from providers.llm.base import LLM
from ragchat.document_index import DocumentIndex
from ragchat.process_models import ProcessModels
from ragchat.session import Session


class App(ProcessModels):
    def __init__(self, settings: Settings, llm: LLM | None = None) -> None:
        """`llm`: an already loaded model to share (the Eval page evaluates with the app's model)."""
        super().__init__(settings, llm)
        settings.home.mkdir(parents=True, exist_ok=True)
        self._sessions: dict[str, Session] = {}
        self._sessions_lock = threading.Lock()

    def session(self, user: str | None = None) -> Session:
        """The session of `user` (None: the default user, i.e. the single-user layout): their memory,
        conversations, query log and rate limit, and their own documents with RAGCHAT_DOCUMENTS=per_user.
        Made once per process and kept. InvalidUserName for a bad name."""
        name = user_name(user)
        with self._sessions_lock:
            session = self._sessions.get(name or "")
            if session is None:
                space = user_space(self.settings, name)
                index = self.shared_index if self.settings.documents == "shared" else self._index_for(space)
                session = self._sessions[name or ""] = Session(self, space, index)
        return session

    @cached_property
    def shared_index(self) -> DocumentIndex:
        """The one document index every user searches with RAGCHAT_DOCUMENTS=shared."""
        return self._index_for(user_space(self.settings, None))

    def _index_for(self, space: UserSpace) -> DocumentIndex:
        return DocumentIndex(self.settings, space, lambda: self.retrieval_embedder, lambda: self.reranker)


def open_session(settings: Settings, user: str | None = None, llm: LLM | None = None) -> Session:
    """A new App for these settings and the session of `user` in it (the CLI, scripts, tests)."""
    return App(settings, llm).session(user)
