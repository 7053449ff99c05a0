"""Reading the grounded reply's form: the hidden phrase line, P(NONE), and replies not in the form."""

from __future__ import annotations

import math

from providers.llm.base import Token
from rag.answer_format import (
    CJK_CHARS,
    Reply,
    answer_grammar,
    none_probability,
    read_reply,
    says_not_covered,
    without_cjk,
)


def tokens(*pieces: str | tuple[str, dict[str, float]]) -> list[Token]:
    return [Token(text=p) if isinstance(p, str) else Token(text=p[0], alternatives=p[1]) for p in pieces]


def visible(pieces: list[Token]) -> tuple[str, Reply]:
    reply = Reply()
    return "".join(t.text for t in read_reply(iter(pieces), reply)), reply


def test_the_phrase_and_missing_lines_are_hidden_and_read() -> None:
    head = [
        Token(text="Phrase", logprob=-0.01),
        Token(text=":", logprob=-0.01),
        Token(text=" R", logprob=math.log(0.9), alternatives={" R": math.log(0.9), " NONE": math.log(0.08)}),
        Token(text="ollo", logprob=math.log(0.5)),
        Token(text="\n"),
    ]
    text, reply = visible(
        head + tokens("Answer", ":", " Rollo", " led", " them", " [1]", ".\n", "Missing", ":", " when", " he", " died")
    )
    assert text == "Rollo led them [1]."
    assert reply.phrase == "Rollo" and not reply.said_none
    assert reply.p_none is not None and abs(reply.p_none - 0.08) < 1e-6
    assert reply.phrase_logprobs == [math.log(0.9), math.log(0.5)]
    assert reply.missing == "when he died"
    assert reply.uncovered("Who led them and when did he die?") == "The documents do not say when he died."


def test_a_missing_none_adds_nothing() -> None:
    _, reply = visible(tokens("Phrase: 1871\nAnswer: It opened in 1871 [1].", "\n", "Missing: NONE"))
    assert reply.missing is None and reply.uncovered("When did it open?") is None


def test_a_missing_line_not_about_the_question_is_dropped() -> None:
    _, reply = visible(tokens("Phrase: 640\nAnswer: It employs 640 people [1].\nMissing: Forklift operators"))
    assert reply.missing == "Forklift operators" and reply.uncovered("How many people does it employ?") is None
    _, reply = visible(tokens("Phrase: 11\nAnswer: It runs 11 warehouses [1].\nMissing: Who is its chief executive"))
    assert reply.uncovered("How many warehouses, and who is its chief executive?") == (
        "The documents do not say who is its chief executive."
    )


def test_a_lone_space_before_the_phrase_counts_none_after_it() -> None:
    _, reply = visible(
        tokens("Phrase:", (" ", {" ": math.log(0.5), " NONE": math.log(0.2)}), ("NONE", {"NONE": math.log(0.6)}))
    )
    assert reply.said_none and reply.phrase == "NONE"
    assert reply.p_none is not None and abs(reply.p_none - (0.2 + 0.5 * 0.6)) < 1e-6


def test_none_shows_nothing() -> None:
    text, reply = visible(tokens("Phrase: NONE"))
    assert text == "" and reply.said_none


def test_a_reply_not_in_the_form_is_shown_as_written() -> None:
    text, reply = visible(tokens("The", " plant", " opened", " in", " 1998", " [2]", "."))
    assert text == "The plant opened in 1998 [2]." and reply.phrase is None and reply.p_none is None


def test_none_probability_needs_alternatives() -> None:
    assert none_probability({}) is None
    assert none_probability({"The": math.log(0.7)}) == 0.0


def test_the_grammar_names_only_the_given_ids_and_bounds_the_sentences() -> None:
    grammar = answer_grammar([1, 3], max_sentences=2)
    assert 'cite ::= "[" ("1" | "3") "]"' in grammar
    assert '(" " sentence){0,1}' in grammar and 'root ::= "Phrase:"' in grammar and "Missing:" in grammar


def test_a_sentence_may_not_start_in_lower_case() -> None:
    assert "sentence ::= [^a-z \\n\\[\\].!?] char*" in answer_grammar([1])


def test_an_answer_that_opens_with_not_covered_answers_nothing() -> None:
    assert says_not_covered("The documents do not say the Q2 revenue of Eastland.")
    assert not says_not_covered("It opened in 1998 [1].")


def test_cjk_is_left_out_only_when_neither_question_nor_evidence_uses_it() -> None:
    assert without_cjk("en", ["en", "fr"]) and without_cjk("fr", [])
    assert not without_cjk("zh", ["en"]) and not without_cjk("en", ["en", "ja"])
    assert CJK_CHARS not in answer_grammar([1]) and CJK_CHARS in answer_grammar([1], no_cjk=True)
