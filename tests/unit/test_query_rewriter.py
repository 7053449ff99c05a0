"""Rewriting a follow-up into a standalone query; the LLM here is a recording stand-in (unit test)."""

from __future__ import annotations

from core.schemas import Answer, ModelInfo
from core.settings import Settings
from rag.query_rewriter import clean_rewrite, rewrite_query
from tests.recording_llm import RecordingLLM

ANSWER_CHARS = Settings.model_fields["rewrite_answer_chars"].default


def turn(question: str, answer: str, refused: bool = False) -> Answer:
    models = ModelInfo(llm="m", embedder="e", reranker="none")
    return Answer(question=question, search_query=question, answer=answer, refused=refused, models=models)


def test_no_history_means_no_llm_call() -> None:
    llm = RecordingLLM("anything")
    assert rewrite_query(llm, "What is the parser?", [], ANSWER_CHARS) == "What is the parser?"
    assert llm.calls == []


def test_history_is_shown_to_the_model_and_its_rewrite_is_used() -> None:
    llm = RecordingLLM("What are the limitations of the PDF parser?\n")
    history = [turn("What does the PDF parser do?", "It extracts text and tables page by page [1].")]
    assert (
        rewrite_query(llm, "and its limitations?", history, ANSWER_CHARS)
        == "What are the limitations of the PDF parser?"
    )
    prompt = llm.calls[0][-1].content
    assert "What does the PDF parser do?" in prompt and "and its limitations?" in prompt
    assert "It extracts text" in prompt


def test_refused_answers_are_left_out_of_the_transcript() -> None:
    llm = RecordingLLM("x")
    rewrite_query(llm, "and then?", [turn("Who won?", "I don't have enough information", refused=True)], ANSWER_CHARS)
    assert "I don't have enough information" not in llm.calls[0][-1].content


def test_labels_and_quotes_are_stripped_and_unusable_replies_fall_back() -> None:
    assert clean_rewrite('Standalone search query: "Q2 revenue of Westland"', "and Q2?") == "Q2 revenue of Westland"
    assert clean_rewrite("\n\n", "and Q2?") == "and Q2?"
    assert clean_rewrite("word " * 300, "and Q2?") == "and Q2?"


def test_an_echoed_follow_up_falls_back_to_the_previous_query_plus_the_question() -> None:
    history = [turn("What was the Q2 revenue of the Westland region?", "8.15 million [1].")]
    assert rewrite_query(RecordingLLM("And in Q1?"), "And in Q1?", history, ANSWER_CHARS) == (
        "What was the Q2 revenue of the Westland region? And in Q1?"
    )


def test_a_rewrite_unrelated_to_the_conversation_is_not_trusted() -> None:
    history = [turn("Who led the Normans?", "Rollo led them [1].")]
    echoed_instructions = RecordingLLM("Reply with the query only.")
    assert (
        rewrite_query(echoed_instructions, "and after him?", history, ANSWER_CHARS)
        == "Who led the Normans? and after him?"
    )


def test_a_standalone_question_repeated_by_the_model_is_kept() -> None:
    history = [turn("Who led the Normans?", "Rollo led them [1].")]
    question = "Which river flows through the Norman capital Rouen?"
    assert rewrite_query(RecordingLLM(question), question, history, ANSWER_CHARS) == question
