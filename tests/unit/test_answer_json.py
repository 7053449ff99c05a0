"""The JSON form of a grounded reply, read back into the text form however the stream is cut."""

from __future__ import annotations

import json

from providers.llm.base import Token
from rag.answer_format import Reply, read_reply
from rag.answer_json import answer_schema, reply_text

REPLY = {
    "phrase": "14 March 1998",
    "answer": [
        {"sentence": "The plant opened on 14 March 1998.", "cites": [3]},
        {"sentence": 'It was called "Mill é"\nthen.', "cites": [1, 3]},
    ],
    "missing": "who built it",
}
TEXT = (
    "Phrase: 14 March 1998\nAnswer: The plant opened on 14 March 1998. [3] "
    'It was called "Mill é" then. [1] [3]\nMissing: who built it'
)


def as_text(raw: str, cut: int) -> str:
    pieces = [raw[i : i + cut] for i in range(0, len(raw), cut)]
    return "".join(t.text for t in reply_text(Token(text=p) for p in pieces))


def test_the_json_reply_reads_as_the_text_form_whatever_the_pieces() -> None:
    raw = json.dumps(REPLY, ensure_ascii=True)
    assert "\\u00e9" in raw  # the escape is decoded even when a piece ends inside it
    for cut in (1, 2, 3, 7, len(raw)):
        assert as_text(raw, cut) == TEXT


def test_none_gives_only_the_phrase_line_and_the_reader_refuses() -> None:
    raw = json.dumps({"phrase": "NONE", "answer": [], "missing": "NONE"})
    reply = Reply()
    shown = "".join(t.text for t in read_reply(reply_text(iter([Token(text=raw)])), reply))
    assert shown == "" and reply.said_none


def test_the_schema_names_the_given_ids_and_needs_a_citation_per_sentence() -> None:
    schema = answer_schema([1, 2], max_sentences=3)
    sentence = schema["properties"]["answer"]["items"]
    assert sentence["properties"]["cites"] == {
        "type": "array",
        "minItems": 1,
        "items": {"type": "integer", "enum": [1, 2]},
    }
    assert schema["properties"]["answer"]["maxItems"] == 3 and sentence["required"] == ["sentence", "cites"]


def test_a_server_that_ignores_the_schema_is_read_as_plain_text() -> None:
    plain = "  The plant opened in 1998 [1]."
    for cut in (1, 4, len(plain)):
        assert as_text(plain, cut).lstrip() == plain.lstrip()  # leading blanks may go
    assert as_text("\n " + json.dumps(REPLY), 3) == TEXT
