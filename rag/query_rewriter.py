"""Follow-up questions ("and its limitations?") are rewritten into a standalone search query using
the conversation so far. Only the search uses the rewrite; the answering model still gets the question as
asked. Without history there is nothing to resolve and no LLM call is made."""

from __future__ import annotations

import re

from core.schemas import Answer
from core.text import tokenize
from providers.llm.base import LLM, ChatMessage, QueueListener

REWRITE_SYSTEM = (
    "Rewrite the user's follow-up question as one standalone search query. Replace words like it, its, "
    "they, that and there with what they refer to in the conversation. Reply with the query only."
)
# One worked example: small models copy the instruction text back without it.
EXAMPLE = [
    ChatMessage(
        role="user",
        content="Conversation:\nUser: Who wrote the novel Dune?\n"
        "Assistant: Frank Herbert wrote Dune, published in 1965.\n\n"
        "Follow-up question: and its sequel?\nStandalone search query:",
    ),
    ChatMessage(role="assistant", content="What is the sequel to the novel Dune by Frank Herbert?"),
]
FOLLOW_UP_OPENERS = frozenset({"and", "also", "but", "so", "then", "what's", "how's"})
REFERENCE_WORDS = frozenset(
    "it its it's they them their theirs there that this those these he him his she her hers one ones same".split()
)


def rewrite_query(
    llm: LLM, question: str, history: list[Answer], answer_chars: int, on_queued: QueueListener | None = None
) -> str:
    """A standalone search query for a follow-up, from the turns in `history` (the caller picks how many;
    each earlier answer is cut to `answer_chars`)."""
    if not history:
        return question
    lines: list[str] = []
    for turn in history:
        lines.append(f"User: {turn.question}")
        if not turn.refused:
            lines.append(f"Assistant: {_shorten(turn.answer, answer_chars)}")
    user = "Conversation:\n" + "\n".join(lines) + f"\n\nFollow-up question: {question}\nStandalone search query:"
    messages = [ChatMessage(role="system", content=REWRITE_SYSTEM), *EXAMPLE, ChatMessage(role="user", content=user)]
    reply = llm.complete(messages, max_tokens=64, temperature=0.0, on_queued=on_queued)
    rewrite = clean_rewrite(reply, question)
    unresolved = set(tokenize(rewrite)) <= set(tokenize(question)) and looks_like_follow_up(question)
    if unresolved or not grounded(rewrite, question, history):
        # The model echoed the follow-up or drifted (copied the instructions, answered instead):
        # search with the previous query plus the follow-up, which still finds the right passages.
        return fallback_query(question, history)
    return rewrite


def fallback_query(question: str, history: list[Answer]) -> str:
    """Without a usable rewrite: the previous search query plus the follow-up still finds its subject."""
    return f"{history[-1].search_query} {question}"


def looks_like_follow_up(question: str) -> bool:
    """Short, or leaning on the conversation: "And in Q1?", "what about its limits", "who led them"."""
    words = re.findall(r"[\w']+", question.lower())
    return len(words) <= 4 or words[0] in FOLLOW_UP_OPENERS or bool(REFERENCE_WORDS.intersection(words))


def grounded(rewrite: str, question: str, history: list[Answer]) -> bool:
    """A usable rewrite reuses at least one term of the question or of the conversation."""
    known = set(tokenize(question))
    for turn in history:
        known |= set(tokenize(turn.question)) | set(tokenize(turn.answer))
    return bool(set(tokenize(rewrite)) & known)


def clean_rewrite(reply: str, question: str) -> str:
    """The model's first line without labels or quotes; the question itself if that is unusable."""
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    for label in ("standalone search query:", "standalone question:", "query:", "search query:"):
        if line.lower().startswith(label):
            line = line[len(label) :].strip()
    line = line.strip("\"'`“”").strip()
    if not line or len(line) > 4 * len(question) + 200:
        return question
    return line


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
