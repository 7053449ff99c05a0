"""Answers about whole documents kept by the prompt that made them (rag/stored_answers.py)."""

from __future__ import annotations

from pathlib import Path

from core.schemas import DocumentRequest
from providers.llm.base import ChatMessage, Sampling
from rag.stored_answers import StoredAnswers

MESSAGES = [ChatMessage(role="system", content="Summarise."), ChatMessage(role="user", content="[1] The text.")]
SAMPLING = Sampling(max_tokens=400, temperature=0.0)


def test_the_key_is_the_prompt_the_model_and_the_sampling() -> None:
    key = StoredAnswers.key(MESSAGES, SAMPLING, "qwen")
    assert key == StoredAnswers.key(list(MESSAGES), SAMPLING.model_copy(), "qwen")
    other_text = [MESSAGES[0], ChatMessage(role="user", content="[1] Another text.")]
    assert key != StoredAnswers.key(other_text, SAMPLING, "qwen")
    assert key != StoredAnswers.key(MESSAGES, SAMPLING, "llama")
    assert key != StoredAnswers.key(MESSAGES, SAMPLING.model_copy(update={"grammar": "root ::= x"}), "qwen")


def test_an_answer_goes_when_a_version_it_read_is_no_longer_live(tmp_path: Path) -> None:
    store = StoredAnswers(tmp_path / "db.sqlite3")
    store.put("one", {"a": "h1"}, "About a.")
    store.put("both", {"a": "h1", "b": "h2"}, "About a and b.")
    assert store.get("one") == "About a." and store.get("missing") is None
    assert store.keep_only({"a": "h1", "b": "h2"}) == 0
    assert store.keep_only({"a": "h1", "b": "h3"}) == 1, "b was replaced"
    assert (store.get("one"), store.get("both")) == ("About a.", None)
    assert store.keep_only({}) == 1 and store.get("one") is None


def test_a_document_request_says_how_the_documents_were_read() -> None:
    fast = DocumentRequest(p_document=0.9, documents=["a.pdf"], method="chosen")
    assert fast.describe() == "read fast, from passages chosen across it"
    again = fast.model_copy(update={"stored": True})
    assert again.describe().endswith("the answer kept from when it was asked before")
    thorough = DocumentRequest(p_document=0.9, method="sections", sections=4, cached_sections=4)
    assert thorough.describe() == "summarised in 4 sections, 4 from the cache"
