"""Grounded answers on the real 0.5B model: the grammar forces the reply's form and valid markers,
and the abstention score decides, before anything is shown, whether an answer is given at all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.settings import get_settings
from providers.llm.base import ChatMessage, Sampling
from rag import answerability
from rag.answer_format import CJK_CHARS, answer_grammar
from rag.messages import REFUSAL_TEXT
from rag.prompting import SYSTEM_PROMPT
from rag.router import Form
from rag.whole_document import document_grammar
from ragchat.application import open_session
from tests.fixtures import write_report_pdf

EVIDENCE = """<evidence>
[1] (harbour.pdf, page 1)
The harbour opened in 1871. Its first master was Ada Lind.

[2] (harbour.pdf, page 4)
Storms closed the harbour in 1903. The museum now holds its logbooks.
</evidence>

Question: {question}
Reply with the Phrase, Answer and Missing lines."""
FORM = re.compile(r"^Phrase: ?(NONE|[^\n\[\]]+\nAnswer: ([^\n]+)\nMissing: ?[^\n\[\]]+)$")


@pytest.mark.parametrize(
    "question", ["Who was the first master of the harbour?", "When did storms close the harbour?", "Who built it?"]
)
def test_the_grammar_forces_the_form_and_markers_from_the_given_ids(home: Path, question: str) -> None:
    llm = open_session(get_settings()).app.llm()
    messages = [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=EVIDENCE.format(question=question)),
    ]
    sampling = Sampling(max_tokens=120, temperature=0.0, grammar=answer_grammar([1, 2]), top_logprobs=10)
    reply = "".join(t.text for t in llm.stream_tokens(messages, sampling))
    form = FORM.match(reply)
    assert form, reply
    if form.group(2):
        answer = form.group(2)
        assert set(re.findall(r"\[(\d+)\]", answer)) <= {"1", "2"} and re.search(r"\[\d\]", answer), answer
        for sentence in re.split(r"(?<=\])\.? (?=[A-Z])", answer):
            assert re.search(r"\[\d\]\.?$", sentence), sentence
            assert not sentence[0].islower(), answer  # no run-on after a marker


def test_the_grammar_lets_a_sentence_quote_initials(home: Path) -> None:
    """A full stop after a capital that follows one ("U.S.", "U.K.") does not end the sentence:
    the model copies "U.S. registry" as it stands (a grammar without that wrote "U..S.registry")."""
    llm = open_session(get_settings()).app.llm()
    passage = "The FAA estimates that this AD affects 73 airplanes of U.S. registry and 12 U.S.-registered gliders."
    messages = [
        ChatMessage(role="system", content="Copy the user's sentence exactly, then write [1]."),
        ChatMessage(role="user", content=passage),
    ]
    grammar = "\n".join(["root ::= answer", *answer_grammar([1]).split("\n")[1:]])  # the answer line's rules
    sampling = Sampling(max_tokens=60, temperature=0.0, grammar=grammar)
    reply = "".join(t.text for t in llm.stream_tokens(messages, sampling))
    assert "of U.S. registry" in reply and "U.S.-registered" in reply, reply
    assert re.search(r"\[1\]\.?$", reply), reply


def test_an_answer_grammar_without_cjk_keeps_chinese_out(home: Path) -> None:
    """The Qwen models slip Chinese words into English and French answers; the grammars keep CJK
    characters out when neither the question nor the evidence is in Chinese, Japanese or Korean."""
    llm = open_session(get_settings()).app.llm()
    messages = [
        ChatMessage(role="system", content="You translate English into Chinese. End with [1]."),
        ChatMessage(role="user", content="The harbour opened in 1871. Its first master was Ada Lind."),
    ]
    cjk = re.compile(f"[{CJK_CHARS}]")
    replies = {}
    for no_cjk in (False, True):
        grammar = document_grammar([1], Form(sentences=2), 2, no_cjk)
        replies[no_cjk] = "".join(
            t.text for t in llm.stream_tokens(messages, Sampling(max_tokens=60, temperature=0.0, grammar=grammar))
        )
    assert cjk.search(replies[False]), replies  # the model writes Chinese when it may
    assert replies[True].strip() and not cjk.search(replies[True]), replies


@pytest.fixture
def report(home: Path, tmp_path: Path) -> Path:
    return write_report_pdf(tmp_path / "report.pdf")


def ask(
    report: Path,
    strictness: str,
    monkeypatch: pytest.MonkeyPatch,
    thresholds: dict[str, float],
    question: str = "What was the Q2 revenue of the Westland region?",
):
    """Asked with these thresholds in place of the model's calibration."""
    monkeypatch.setattr(answerability, "calibration_for", lambda label: None)
    monkeypatch.setattr(answerability, "DEFAULT_THRESHOLDS", thresholds)
    session = open_session(get_settings(strictness=strictness, memory_enabled=False))
    assert session.ingest_paths([report])[0].status == "indexed"
    return session.ask(question)


def test_a_score_at_the_threshold_refuses_with_no_citation(report: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = ask(report, "strict", monkeypatch, {"lenient": 2.0, "balanced": 2.0, "strict": 0.0})
    assert answer.refused and answer.answer == REFUSAL_TEXT and answer.citations == []
    assert answer.abstention is not None and answer.abstention.threshold == 0.0
    assert answer.abstention.score is not None and not answer.abstention.calibrated


def test_below_the_threshold_the_model_answers_with_its_own_markers(
    report: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = ask(report, "lenient", monkeypatch, {"lenient": 2.0, "balanced": 2.0, "strict": 2.0})
    assert not answer.refused and "8.15" in answer.answer, answer.answer
    assert answer.citations and all(c.method == "marker" for c in answer.citations)
    assert "Q2 revenue" in answer.given.hits[0].chunk.text  # the table's header came with its row
    assert answer.abstention is not None and answer.abstention.phrase


def test_a_question_answered_in_part_gets_that_part_and_says_what_is_missing(
    report: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "How many warehouses does the company operate, and who is its chief executive?"
    answer = ask(report, "lenient", monkeypatch, {"lenient": 2.0, "balanced": 2.0, "strict": 2.0}, question)
    assert not answer.refused and re.search(r"\b(11|eleven)\b", answer.answer), answer.answer
    assert answer.citations and answer.citations[0].method == "marker"
    assert answer.uncovered and "chief executive" in answer.uncovered and answer.answer.endswith(answer.uncovered)


def test_an_openai_compatible_server_answers_in_the_json_form_with_its_own_markers(
    report: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """xllamacpp serves OpenAI's API for the loaded 0.5B: the answer path sends it the JSON schema
    (no grammar), reads the streamed JSON back as the reply's text form, and keeps its markers."""
    served = open_session(get_settings()).app.llm()
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "openai")
    monkeypatch.setenv("RAGCHAT_OPENAI_BASE_URL", f"{served.listening_address}/v1")
    session = open_session(get_settings(memory_enabled=False))
    assert session.app.llm().structured and not session.app.llm().constrains
    assert session.ingest_paths([report])[0].status == "indexed"
    answer = session.ask("What was the Q2 revenue of the Westland region?")
    assert not answer.refused and "8.15" in answer.answer and "{" not in answer.answer, answer.answer
    assert answer.citations and all(c.method == "marker" for c in answer.citations)
    assert answer.abstention is not None and answer.abstention.phrase and not answer.abstention.calibrated


def test_a_yes_no_question_is_answered_by_the_sentence_that_settles_it(report: Path) -> None:
    """The real 0.5B reads one token over the evidence sentence that bears most on a yes/no question:
    the answer is its verdict and that sentence quoted, cited to its page, and no answer text of the
    model's; an open question over the same report still gets the model's own cited sentences."""
    session = open_session(get_settings(memory_enabled=False))
    assert session.ingest_paths([report])[0].status == "indexed"
    answer = session.ask("Do forklift operators need a certification before their first shift?")
    assert not answer.refused, answer.answer
    assert re.match(r'^((Yes|No)\. )?The document says: "[^"]*two-day certification[^"]*" \[\d\]\.$', answer.answer)
    assert [c.page for c in answer.citations] == [1]
    assert answer.abstention is not None and answer.abstention.signals is not None
    assert set(answer.abstention.signals) == {"p_yes", "p_no", "p_none"}

    opened = session.ask("How many people does the company employ?")
    assert opened.abstention is not None and opened.abstention.phrase  # the ordinary path: a hidden phrase line
