from __future__ import annotations

from pathlib import Path

from rag.conversations import ConversationStore
from ragchat.schemas import Answer, ModelInfo


def answer(question: str, search_query: str | None = None) -> Answer:
    return Answer(
        question=question,
        search_query=search_query or question,
        answer=f"answer to {question}",
        refused=False,
        models=ModelInfo(llm="m", embedder="e", reranker="none (test)"),
    )


def test_turns_persist_in_order_across_instances(tmp_path: Path) -> None:
    db = tmp_path / "ragchat.sqlite3"
    store = ConversationStore(db)
    sid = store.new_session_id()
    store.append(sid, answer("first"))
    store.append(sid, answer("and second?", "second about first"))
    store.append("other", answer("unrelated"))
    reopened = ConversationStore(db)
    turns = reopened.history(sid)
    assert [t.question for t in turns] == ["first", "and second?"]
    assert turns[1].search_query == "second about first"
    assert turns[1].models.reranker == "none (test)"
    assert [t.question for t in reopened.history(sid, last=1)] == ["and second?"]


def test_sessions_are_listed_with_their_first_question_and_can_be_deleted(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "db.sqlite3")
    store.append("s1", answer("What is BM25?"))
    store.append("s1", answer("and its weakness?"))
    summaries = {s.session_id: s for s in store.sessions()}
    assert summaries["s1"].title == "What is BM25?" and summaries["s1"].turns == 2
    store.delete("s1")
    assert store.sessions() == [] and store.history("s1") == []
