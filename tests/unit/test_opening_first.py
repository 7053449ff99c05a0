"""An answer about a long document written in two calls (rag/pipeline.py `_generated`): the opening's
reply becomes the start the second call continues; an opening that wrote nothing leaves the whole
answer to one call over every passage. A stand-in model records each call's prompt and sampling."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from core.settings import get_settings
from providers.llm.base import ChatMessage, QueueListener, Sampling, Token
from providers.llm.generation_queue import QueueWait
from rag.pipeline import AskOptions
from rag.question import QuestionState
from rag.whole_document import Opening
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM


class ScriptedLLM(RecordingLLM):
    constrains = True
    continues = True

    def __init__(self, replies: list[str]) -> None:
        super().__init__("")
        self.replies = replies
        self.samplings: list[Sampling] = []

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        self.calls.append(messages)
        self.samplings.append(sampling)
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
    assert llm.samplings[1] == OPENING.rest
    assert "opening_ms" in state.timings and "rest_first_token_ms" in state.timings


def test_an_opening_that_wrote_nothing_leaves_the_whole_answer_to_one_call(tmp_path: Path) -> None:
    text, llm, _ = answer(tmp_path, ["", "- It is a manual [1].\n- It covers packages [4]."])
    assert text == "- It is a manual [1].\n- It covers packages [4]."
    assert llm.calls[1] == WHOLE and llm.samplings[1] == WHOLE_SAMPLING
