"""The grounded reply as JSON, for servers that constrain output to a JSON schema but take no GBNF
grammar (Ollama's `format`, an OpenAI-compatible `response_format`).

The schema holds the same three parts as the text form (rag/answer_format.py): the phrase, the answer
as sentences each with the evidence ids it cites (`enum` of the given ids, at least one), and what is
missing. `reply_text` turns the streamed JSON back into the text form as it arrives, so the answer
path reads both the same way and the person still sees the answer stream word by word.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from providers.llm.base import Token
from rag.answer_format import ANSWER, MISSING, NONE, PHRASE


def answer_schema(ids: list[int], max_sentences: int, phrase_chars: int = 120) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "phrase": {"type": "string", "maxLength": phrase_chars},
            "answer": {
                "type": "array",
                "maxItems": max_sentences,
                "items": {
                    "type": "object",
                    "properties": {
                        "sentence": {"type": "string"},
                        "cites": {"type": "array", "minItems": 1, "items": {"type": "integer", "enum": ids}},
                    },
                    "required": ["sentence", "cites"],
                },
            },
            "missing": {"type": "string", "maxLength": phrase_chars},
        },
        "required": ["phrase", "answer", "missing"],
    }


class _JsonToText:
    """An incremental reader of the reply's JSON: feed it pieces, get the text form's pieces."""

    def __init__(self) -> None:
        self.stack: list[str] = []  # "{" or "["
        self.path: list[str | int] = []  # keys and array indexes down to the current value
        self.key: str | None = None  # the key just read, for the value that follows
        self.expect_key = False
        self.in_string = False
        self.string_is_key = False
        self.escape = ""  # a backslash sequence being read
        self.buffer = ""  # the current key, or the phrase (checked for NONE) or a number
        self.number = ""
        self.phrase_done = False
        self.none = False

    def feed(self, text: str) -> str:
        out: list[str] = []
        for ch in text:
            out.append(self._char(ch))
        return "".join(out)

    def _where(self) -> tuple[str | int, ...]:
        return tuple(self.path)

    def _char(self, ch: str) -> str:
        if self.in_string:
            return self._string_char(ch)
        if self.number and not (ch.isdigit() or ch in "-+.eE"):
            emitted = self._number_done()
            return emitted + self._char(ch)
        if ch == '"':
            self.in_string, self.string_is_key, self.buffer = True, self.expect_key, ""
            return self._value_starts() if not self.string_is_key else ""
        if ch == "{":
            emitted = self._value_starts()
            self._push("{")
            self.expect_key = True
            return emitted
        if ch == "[":
            emitted = self._value_starts()
            self._push("[")
            self.path.append(0)
            return emitted
        if ch in "}]":
            return self._pop()
        if ch == ":":
            self.expect_key = False
            return ""
        if ch == ",":
            if self.stack and self.stack[-1] == "[":
                self.path[-1] = int(self.path[-1]) + 1
            else:
                self.expect_key = True
            return ""
        if ch.isdigit() or ch == "-":
            self.number += ch
        return ""

    def _push(self, kind: str) -> None:
        if self.key is not None and self.stack and self.stack[-1] == "{":
            self.path.append(self.key)
        self.stack.append(kind)

    def _pop(self) -> str:
        emitted = ""
        kind = self.stack.pop() if self.stack else ""
        if kind == "[":
            self.path.pop()  # the index
        if self.stack and self.stack[-1] == "{" and self.path and isinstance(self.path[-1], str):
            closed = self.path.pop()
            if closed == "answer" and not self.none:
                emitted = f"\n{MISSING} "
        self.expect_key = bool(self.stack) and self.stack[-1] == "{"
        return emitted

    def _value_starts(self) -> str:
        """Text that goes before a value, by where it is."""
        where = (*self.path, self.key) if self.stack and self.stack[-1] == "{" else self._where()
        if where == ("phrase",):
            return f"{PHRASE} "
        if where == ("answer",) and not self.none:
            return f"\n{ANSWER}"
        if len(where) == 3 and where[0] == "answer" and where[2] == "sentence" and not self.none:
            return " "
        return ""

    def _string_char(self, ch: str) -> str:
        if self.escape:
            self.escape += ch
            if self.escape.startswith("\\u") and len(self.escape) < 6:
                return ""
            decoded = json.loads(f'"{self.escape}"')
            self.escape = ""
            return self._string_text(decoded)
        if ch == "\\":
            self.escape = ch
            return ""
        if ch == '"':
            self.in_string = False
            if self.string_is_key:
                self.key = self.buffer
                return ""
            return self._string_ends()
        return self._string_text(ch)

    def _string_text(self, text: str) -> str:
        self.buffer += text
        if self.string_is_key or self.none:
            return ""
        where = (*self.path, self.key)
        if where == ("phrase",) or where == ("missing",):
            return text.replace("\n", " ")
        if len(where) == 3 and where[0] == "answer" and where[2] == "sentence":
            return text.replace("\n", " ")
        return ""

    def _string_ends(self) -> str:
        if (*self.path, self.key) == ("phrase",) and self.buffer.strip().upper().startswith(NONE):
            self.none = True
        return ""

    def _number_done(self) -> str:
        number, self.number = self.number, ""
        where = self._where()
        if len(where) == 4 and where[0] == "answer" and where[2] == "cites" and not self.none:
            return f" [{int(number)}]"
        return ""


def reply_text(tokens: Iterator[Token]) -> Iterator[Token]:
    """The JSON reply's pieces as the text form's pieces (Phrase:, Answer:, Missing: lines).

    A server that ignores the schema (an Ollama older than structured outputs, a proxy that drops
    `response_format`) answers in plain text: a reply that does not open with "{" passes through
    unchanged and is treated like any unconstrained model's answer."""
    reader = _JsonToText()
    plain: bool | None = None  # undecided until the first non-blank character
    for token in tokens:
        if plain is None and token.text.strip():
            plain = not token.text.lstrip().startswith("{")
        text = token.text if plain else reader.feed(token.text)
        if text:
            yield Token(text=text, logprob=token.logprob, alternatives=token.alternatives)
