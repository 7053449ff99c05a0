"""An answer about a long document written in two calls (rag/pipeline.py `_generated`): the opening's
reply becomes the start the second call continues; an opening that wrote nothing leaves the whole
answer to one call over every passage. A stand-in model records each call's prompt and sampling."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from core.schemas import DocumentRecord, Hit, Page
from core.settings import get_settings
from providers.llm.base import ChatMessage, QueueListener, Sampling, Token
from providers.llm.generation_queue import QueueWait
from rag.pipeline import AskOptions
from rag.question import QuestionState
from rag.router import Form
from rag.whole_document import Opening, passages
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM


class ScriptedLLM(RecordingLLM):
    constrains = True
    continues = True

    def __init__(self, replies: list[str]) -> None:
        super().__init__("")
        self.replies = replies

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        self.record(messages, sampling)
        reply = self.replies.pop(0)
        if reply:
            yield Token(text=reply)


WHOLE = [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="all passages")]
OPENING = Opening(
    messages=[ChatMessage(role="system", content="s"), ChatMessage(role="user", content="first passages")],
    sampling=Sampling(max_tokens=50, temperature=0.0, grammar="root ::= opening"),
    rest=Sampling(max_tokens=50, temperature=0.0, grammar="root ::= rest"),
)
WHOLE_SAMPLING = Sampling(max_tokens=50, temperature=0.0, grammar="root ::= whole")


def answer(tmp_path: Path, replies: list[str]) -> tuple[str, ScriptedLLM, QuestionState]:
    llm = ScriptedLLM(replies)
    pipeline = build_pipeline(get_settings(home=tmp_path), object(), lambda: llm)
    state = QuestionState("Summarize it.", AskOptions(), "balanced", QueueWait())
    return "".join(pipeline._generated(state, WHOLE, WHOLE_SAMPLING, OPENING)), llm, state


def test_the_rest_continues_the_opening_as_the_models_own_reply(tmp_path: Path) -> None:
    text, llm, state = answer(tmp_path, ["- It is a manual [1].", "\n- It covers packages [4]."])
    assert text == "- It is a manual [1].\n- It covers packages [4]."
    assert llm.calls[0] == OPENING.messages and llm.samplings[0] == OPENING.sampling
    assert llm.calls[1] == [*WHOLE, ChatMessage(role="assistant", content="- It is a manual [1].")]
    assert llm.samplings[1] == OPENING.rest.model_copy(update={"max_tokens": 49}), "the budget less the opening"
    assert "opening_ms" in state.timings and "rest_first_token_ms" in state.timings
    assert state.timings["generate_ms"] >= state.timings["opening_ms"]


def test_an_opening_that_wrote_nothing_leaves_the_whole_answer_to_one_call(tmp_path: Path) -> None:
    text, llm, state = answer(tmp_path, ["", "- It is a manual [1].\n- It covers packages [4]."])
    assert text == "- It is a manual [1].\n- It covers packages [4]."
    assert llm.calls[1] == WHOLE and llm.samplings[1] == WHOLE_SAMPLING
    assert "first_token_ms" in state.timings and "rest_first_token_ms" not in state.timings


def record(source: str) -> DocumentRecord:
    return DocumentRecord(
        doc_id=f"id-{source}",
        source=source,
        file_type="pdf",
        content_hash="v1",
        size_bytes=1,
        pages=1,
        chunks=1,
        ingested_at=datetime.now(UTC),
    )


TEXT = " ".join(f"Sentence number {n} says something about topic {n}." for n in range(1, 31))


def test_the_opening_is_written_first_only_where_it_can_help(tmp_path: Path) -> None:
    """One document, a form of more than one item and no word count, a model that continues replies,
    and passages beyond the opening's; RAGCHAT_OVERVIEW_OPENING_TOKENS=0 turns it off."""
    llm = ScriptedLLM([])
    pipeline = build_pipeline(get_settings(home=tmp_path), object(), lambda: llm)
    state = QuestionState("Summarize it.", AskOptions(), "balanced", QueueWait())
    hits = passages(record("a.pdf"), [Page(number=1, text=TEXT)], 40)
    other = passages(record("b.pdf"), [Page(number=1, text=TEXT)], 40)

    def opening(form: Form, given: list[Hit] = hits) -> Opening | None:
        return pipeline._opening(state, given, form, WHOLE_SAMPLING)

    written = opening(Form(bullets=3))
    assert written is not None and len(written.messages) == 2
    assert opening(Form()) is not None and opening(Form(bullets=0)) is not None
    assert opening(Form(words=60)) is None and opening(Form(bullets=1)) is None and opening(Form(sentences=1)) is None
    assert opening(Form(bullets=3), hits[:1]) is None, "nothing beyond the opening"
    assert opening(Form(bullets=3), hits + other) is None, "two documents"
    llm.continues = False
    assert opening(Form(bullets=3)) is None
    llm.continues = True
    off = build_pipeline(get_settings(home=tmp_path, overview_opening_tokens=0), object(), lambda: llm)
    assert off._opening(state, hits, Form(bullets=3), WHOLE_SAMPLING) is None
