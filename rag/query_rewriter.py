"""Follow-up questions ("and its limitations?") are rewritten into a standalone search query using
the conversation so far. Only the search uses the rewrite; the answerer still gets the question as
asked. Without history there is nothing to resolve and no LLM call is made."""

from __future__ import annotations

from rag.conversations import Turn
from rag.llm.base import LLM, ChatMessage

REWRITE_SYSTEM = (
    "You rewrite a follow-up question into one standalone search query for a document search engine. "
    "Replace pronouns and references (it, its, they, that, the second one) with what they refer to in the "
    "conversation. Keep the user's language and key terms. If the question already stands alone, repeat it "
    "unchanged. Reply with the query only: no explanation, no quotes."
)
HISTORY_TURNS = 3
ANSWER_CHARS = 300


def rewrite_query(llm: LLM, question: str, history: list[Turn]) -> str:
    if not history:
        return question
    lines: list[str] = []
    for turn in history[-HISTORY_TURNS:]:
        lines.append(f"User: {turn.question}")
        if not turn.answer.refused:
            lines.append(f"Assistant: {_shorten(turn.answer.answer)}")
    user = "Conversation:\n" + "\n".join(lines) + f"\n\nFollow-up question: {question}\nStandalone search query:"
    messages = [ChatMessage(role="system", content=REWRITE_SYSTEM), ChatMessage(role="user", content=user)]
    reply = "".join(llm.stream(messages, max_tokens=64, temperature=0.0))
    return clean_rewrite(reply, question)


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


def _shorten(text: str) -> str:
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS].rsplit(" ", 1)[0] + " …"
