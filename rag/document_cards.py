"""A document's card: its overview, written once, before anyone asks for it.

After a document is indexed, while the model is idle, its overview is written in the background from
passages chosen across it (rag/overview.py) and kept with the document's version and the model that
wrote it: the document list shows it, and a request for a general overview of that one document
("what is this about?") is answered from it at once, its citations checked like any answer's. An
overview a user asked for is kept as the card too. A replaced or deleted document's card is dropped
with its version (`keep_only`).

Writing a card yields at once to a question: its prompt is read by the model in steps of a few
passages (llama.cpp keeps what it read as the prefix of the next step), and between steps and between
the tokens of its reply it stops as soon as a question waits for the model; it is written again later.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from core.schemas import DocumentRecord, Hit
from core.sqlite_db import SQLiteTables
from providers.llm.base import LLM, ChatMessage, Sampling
from rag.citations import strip_markers
from rag.degenerate import worth_keeping
from rag.router import Form, Route

# What a card answers, asked in English: a card is served to requests in the language it was written in.
CARD_REQUEST = "What is this document about? Give an overview of it and its key points."
CARD_LANGUAGE = "en"
# A card's prompt is read in steps of about this many characters (~60 tokens: about a second for the
# 1.5B on two cores), so a question that comes meanwhile waits at most that long for the model.
PREFILL_STEP_CHARS = 180

_SCHEMA = """
CREATE TABLE IF NOT EXISTS document_cards (
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    card_json TEXT NOT NULL,
    PRIMARY KEY (doc_id, content_hash, model)
)
"""


class DocumentCard(BaseModel):
    """One version's overview as the model wrote it, with the passages it cites as [n]."""

    doc_id: str
    content_hash: str
    model: str = Field(description="The label of the model that wrote it.")
    lang: str = CARD_LANGUAGE
    reply: str = Field(description="The model's text, its [n] markers naming `passages`.")
    passages: list[Hit]
    written_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class DocumentCards(SQLiteTables):
    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path, _SCHEMA)

    def get(self, doc_id: str, content_hash: str, model: str) -> DocumentCard | None:
        with closing(self._connect()) as conn:
            row = conn.execute(
                "SELECT card_json FROM document_cards WHERE doc_id = ? AND content_hash = ? AND model = ?",
                (doc_id, content_hash, model),
            ).fetchone()
        return DocumentCard.model_validate_json(row["card_json"]) if row else None

    def latest(self, doc_id: str, content_hash: str) -> DocumentCard | None:
        """The version's most recent card, whichever model wrote it (the document list shows it)."""
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT card_json FROM document_cards WHERE doc_id = ? AND content_hash = ?", (doc_id, content_hash)
            ).fetchall()
        cards = [DocumentCard.model_validate_json(row["card_json"]) for row in rows]
        return max(cards, key=lambda card: card.written_at, default=None)

    def put(self, card: DocumentCard) -> None:
        with closing(self._connect()) as conn, conn:
            conn.execute(
                "INSERT OR REPLACE INTO document_cards VALUES (?, ?, ?, ?)",
                (card.doc_id, card.content_hash, card.model, card.model_dump_json()),
            )

    def keep_only(self, live: dict[str, str]) -> int:
        """Drop the cards of every version that is not live (doc_id → content_hash); returns how many."""
        with closing(self._connect()) as conn, conn:
            stored = conn.execute("SELECT DISTINCT doc_id, content_hash FROM document_cards").fetchall()
            dropped = 0
            for row in stored:
                if live.get(row["doc_id"]) != row["content_hash"]:
                    dropped += conn.execute(
                        "DELETE FROM document_cards WHERE doc_id = ? AND content_hash = ?",
                        (row["doc_id"], row["content_hash"]),
                    ).rowcount
            return dropped

    def versions(self) -> list[tuple[str, str, str]]:
        """(doc_id, content_hash, model) of every card kept."""
        with closing(self._connect()) as conn:
            rows = conn.execute("SELECT doc_id, content_hash, model FROM document_cards").fetchall()
        return [(row["doc_id"], row["content_hash"], row["model"]) for row in rows]


class UseCards:
    """Which requests a card answers, finding and keeping cards, and writing one that yields."""

    def __init__(self, cards: Callable[[], DocumentCards], threshold: float) -> None:
        self._cards = cards
        self._threshold = threshold

    def applies(
        self, route: Route, documents: list[DocumentRecord], lang: str, thorough: bool | None
    ) -> DocumentRecord | None:
        """The one document whose card answers this request: a general overview (the router's
        P(overview) at the threshold) of a single document, in the card's language, asking for no
        shape ("in 3 bullets" is written afresh) and not for a thorough reading."""
        general = route.p_overview >= self._threshold and route.form == Form() and not thorough
        return documents[0] if general and len(documents) == 1 and lang == CARD_LANGUAGE else None

    def find(self, record: DocumentRecord, model: str) -> DocumentCard | None:
        return self._cards().get(record.doc_id, record.content_hash, model)

    def written(self, doc_id: str, content_hash: str, model: str) -> bool:
        """Whether this model wrote the version's card: its chosen passages were read then."""
        return self._cards().get(doc_id, content_hash, model) is not None

    def keep(self, record: DocumentRecord, model: str, reply: str, passages: list[Hit]) -> DocumentCard | None:
        """Keep an overview as the document's card, unless it is not one (empty, a loop, bare markers)."""
        if not worth_keeping(reply):
            return None
        card = DocumentCard(
            doc_id=record.doc_id, content_hash=record.content_hash, model=model, reply=reply.strip(), passages=passages
        )
        self._cards().put(card)
        return card

    def write(self, llm: LLM, messages: list[ChatMessage], sampling: Sampling, stop: Callable[[], bool]) -> str | None:
        """The model's reply, or None as soon as `stop()` is true: its prompt is first read in steps
        (each step's state is the prefix llama.cpp reuses for the next), checking between them."""
        system, user = messages
        for end in _step_ends(user.content, PREFILL_STEP_CHARS):
            if stop():
                return None
            partial = [system, ChatMessage(role="user", content=user.content[:end])]
            llm.first_token(partial, Sampling(max_tokens=1, temperature=0.0))  # read, so its state is cached
        reply: list[str] = []
        tokens = llm.stream_tokens(messages, sampling)
        try:
            for token in tokens:
                if stop():
                    return None
                reply.append(token.text)
        finally:
            close = getattr(tokens, "close", None)
            if close is not None:
                close()
        return "".join(reply)


def _step_ends(text: str, step: int) -> list[int]:
    """Where to cut the prompt for each step: after every `step` characters, at a space."""
    ends: list[int] = []
    at = step
    while at < len(text):
        space = text.rfind(" ", 0, at)
        cut = space if space > (ends[-1] if ends else 0) else at
        ends.append(cut)
        at = cut + step
    return ends


def card_text(card: DocumentCard) -> str:
    """The card as the document list shows it: its text without citation markers."""
    return " ".join(strip_markers(card.reply).split())
