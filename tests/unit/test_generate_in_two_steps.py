"""The Generate stage with a grammar-taking model: the phrase line first, then the answer as the
continuation of the model's own message, its first sentence bound to the phrase. A scripted model
stands in for llama.cpp here; tests/e2e/test_grounded_answers.py runs the real one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.schemas import Chunk, Evidence, Given, Hit, Scores
from core.settings import get_settings
from providers.llm.base import LLM, ChatMessage, QueueListener, Sampling, Token
from rag.answer_format import Reply, read_reply
from rag.stages import Generate


class ScriptedModel(LLM):
    """Replies with the next scripted text, token by token, and keeps what it was asked."""

    label = "scripted"
    constrains = True

    def __init__(self, *replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[ChatMessage], Sampling]] = []

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        self.calls.append((messages, sampling))
        for text in self.replies.pop(0):
            yield Token(text=text)

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        raise AssertionError("not used")


def given() -> Given:
    chunk = Chunk(
        chunk_id="c1", doc_id="d", content_hash="h", source="safety.txt", file_type="txt", page=0,
        chunk_index=0, text="Fire drills take place on the first Monday of each quarter.", char_start=0, char_end=60,
    )  # fmt: skip
    return Given(mode="sources", evidence=[Evidence(id=1, hit=Hit(chunk=chunk, scores=Scores(dense=0.6)))])


QUESTION = "When do fire drills take place?"
MESSAGES = [ChatMessage(role="system", content="system"), ChatMessage(role="user", content=QUESTION)]


def generate(model: ScriptedModel) -> tuple[Iterator[Token], dict[str, float]]:
    timings: dict[str, float] = {}
    stage = Generate(lambda: model, get_settings())
    return stage.grounded_tokens(MESSAGES, QUESTION, given(), 0.0, timings, lambda _ahead: None), timings


def test_the_answer_continues_the_phrase_line_and_must_hold_the_phrase() -> None:
    model = ScriptedModel(
        ["Phrase:", " the first Monday", " of each quarter", "\n"],
        [" Fire drills take place on the first Monday of each quarter [1].", "\nMissing: NONE"],
    )
    tokens, timings = generate(model)
    reply = Reply()
    shown = "".join(t.text for t in read_reply(tokens, reply))
    assert shown == "Fire drills take place on the first Monday of each quarter [1]."
    assert reply.phrase == "the first Monday of each quarter"
    (_, head), (continued, body) = model.calls
    assert head.grammar is not None and "Answer" not in head.grammar and head.top_logprobs
    assert continued[-1] == ChatMessage(role="assistant", content="Phrase: the first Monday of each quarter\nAnswer:")
    assert body.grammar is not None and "[fF] [iI] [rR] [sS] [tT]" in body.grammar
    assert "first_token_ms" in timings and "generate_ms" in timings


def test_a_reader_that_stops_at_the_phrase_line_never_starts_the_answer() -> None:
    model = ScriptedModel(["Phrase:", " 1998", "\n"], ["never asked"])
    tokens, _ = generate(model)
    first = next(read_reply(tokens, Reply()))
    assert first.text == ""  # the head is read: the caller decides here, before the answer is written
    tokens.close()
    assert len(model.calls) == 1


def test_a_phrase_cut_at_the_token_limit_still_ends_its_line() -> None:
    model = ScriptedModel(["Phrase:", " 0123456789"], [" It is 0123456789 [1].", "\nMissing: NONE"])
    tokens, _ = generate(model)
    reply = Reply()
    assert "".join(t.text for t in read_reply(tokens, reply)) == "It is 0123456789 [1]."
    assert model.calls[1][0][-1].content == "Phrase: 0123456789\nAnswer:"
