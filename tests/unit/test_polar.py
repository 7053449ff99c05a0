"""Yes/no questions: told apart from requests and open questions that share their first words
(rag/polar.py), and answered by the sentence that settles them and one token of the model's
(rag/polar_answer.py): the verdict and the quotation, or the refusal when the model finds it unsettled."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.schemas import Answer, Retrieval
from core.settings import get_settings
from providers.llm.base import ChatMessage, QueueListener, Sampling, Token
from rag.messages import REFUSAL_TEXT
from rag.pipeline import AskOptions
from rag.polar import is_polar
from rag.polar_answer import YesNo
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM
from tests.unit.test_citations import _hit
from ui.chat_page import _timing_text


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("Does the lease allow pets?", "en"),
        ("Isn't the office closed on Sundays?", "en"),
        ("The invoice includes shipping, right?", "en"),
        ("According to page 3, must tenants insure the contents?", "en"),
        ("If the rent is late, is there a penalty?", "en"),
        ("Tell me whether the warranty covers water damage.", "en"),
        ("Can you tell me if the deposit is refundable?", "en"),
        ("I lost the receipt. Can I still return the chair?", "en"),
        ("Can tenants sublet the flat?", "en"),
        ("Est-ce que le loyer comprend les charges ?", "fr"),
        ("Le bail peut-il être résilié avant terme ?", "fr"),
        ("Muss der Mieter die Kaution zahlen?", "de"),
        ("¿Hay estacionamiento incluido?", "es"),
        ("O aluguel inclui o condomínio?", "pt"),
    ],
)
def test_yes_no_questions_are_told_apart(question: str, lang: str) -> None:
    assert is_polar(question, lang)


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("What is the deposit?", "en"),
        ("Can you list every payment date?", "en"),
        ("Could you please summarise the lease?", "en"),
        ("Do you know who signed the lease?", "en"),
        ("Is the rent paid monthly or quarterly?", "en"),
        ("Is there a way to renew online?", "en"),
        ("Is the deposit refundable, and if so, when is it paid back?", "en"),
        ("Summarise the lease.", "en"),
        ("How long is the St. Lawrence River?", "en"),
        ("In what year was Charleston, North Carolina founded?", "en"),
        ("The landlord's agent is called?", "en"),
        ("And in Q1?", "en"),
        ("Q2 revenue of Westland?", "en"),
        ("À quelle heure ferme la cantine ?", "fr"),
        ("In welchem Jahr wurde das Lager gebaut?", "de"),
        ("Quelle est la date limite ?", "fr"),
        ("Wann beginnt der Vertrag?", "de"),
        ("¿Cuándo vence el contrato?", "es"),
        ("¿Me puedes decir cuándo vence el contrato?", "es"),
    ],
)
def test_open_questions_and_requests_are_not_yes_no(question: str, lang: str) -> None:
    assert not is_polar(question, lang)


def test_the_three_answers_are_read_from_the_first_tokens_probabilities() -> None:
    read = YesNo.read({"Yes": math.log(0.5), "No": math.log(0.3), "NONE": math.log(0.1), "The": math.log(0.1)})
    assert read is not None
    assert (round(read.yes, 3), round(read.no, 3), round(read.none, 3)) == (0.556, 0.333, 0.111)
    assert round(read.no_share, 3) == 0.375
    assert YesNo.read({"Non": math.log(0.9)}) == YesNo(0.0, 1.0, 0.0)  # French "non" is a no, "NON" a NONE
    assert YesNo.read({"The": 0.0}) is None


PASSAGES = [
    "Tenants may keep one cat or one small dog. Larger animals need the landlord's written consent.",
    "The deposit is returned within thirty days. Rent is due on the first day of each month.",
]


class OneTokenLLM(RecordingLLM):
    """Answers every prompt with one token whose top log-probabilities are given."""

    constrains = True
    gives_logprobs = True

    def __init__(self, alternatives: dict[str, float]) -> None:
        super().__init__("")
        self.alternatives = alternatives

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        self.record(messages, sampling)
        best = max(self.alternatives, key=lambda token: self.alternatives[token])
        yield Token(text=best, logprob=self.alternatives[best], alternatives=self.alternatives)


class TwoPassages:
    def languages(self, doc_ids: object = None) -> dict[str, int]:
        return {"en": 2}

    def search(self, query: str, top_k: int, *args: object, **kwargs: object) -> Retrieval:
        hits = [_hit(n, text, page=n) for n, text in enumerate(PASSAGES, start=1)]
        return Retrieval(query=query, hits=hits, candidates=hits, bm25_weight=0.5, fusion="convex", reranker="none")


def ask(tmp_path: Path, llm: OneTokenLLM, question: str, **overrides: object) -> Answer:
    settings = get_settings(home=tmp_path, **overrides)
    return build_pipeline(settings, TwoPassages(), lambda: llm).ask(question, AskOptions()).result()


def probabilities(yes: float, no: float, none: float) -> dict[str, float]:
    return {"Yes": math.log(yes), "No": math.log(no), "NONE": math.log(none)}


def test_a_yes_no_question_gets_the_verdict_and_the_sentence_that_settles_it(tmp_path: Path) -> None:
    # Every sentence gets the same reading here, so the best-ranked one is quoted.
    llm = OneTokenLLM(probabilities(0.3, 0.65, 0.05))
    answer = ask(tmp_path, llm, "May tenants keep a small dog?")
    assert not answer.refused
    assert answer.answer == 'No. The document says: "Tenants may keep one cat or one small dog." [1].'
    assert [(c.marker, c.page) for c in answer.citations] == [(1, 1)]
    # One token for each of the sentences that bear most on the question, and no answer written.
    assert len(llm.calls) == get_settings().polar_sentences and {s.max_tokens for s in llm.samplings} == {1}
    assert "Tenants may keep one cat or one small dog." in llm.calls[0][1].content
    assert answer.abstention is not None and answer.abstention.read == "yes_no"
    assert answer.abstention.signals is not None and round(answer.abstention.signals["p_no"], 2) == 0.65
    assert "read as a yes/no question: yes 0.30, no 0.65, not settled 0.05 (refuses at 0.30)" in _timing_text(answer)

    sure = ask(tmp_path / "yes", OneTokenLLM(probabilities(0.9, 0.05, 0.05)), "May tenants keep a small dog?")
    assert sure.answer.startswith("Yes. The document says:")


def test_a_model_unsure_between_yes_and_no_gives_the_quotation_alone(tmp_path: Path) -> None:
    answer = ask(tmp_path, OneTokenLLM(probabilities(0.6, 0.35, 0.05)), "May tenants keep a small dog?")
    assert not answer.refused
    assert answer.answer == 'The document says: "Tenants may keep one cat or one small dog." [1].'


def test_a_yes_no_question_the_sentence_does_not_settle_is_refused(tmp_path: Path) -> None:
    answer = ask(tmp_path, OneTokenLLM(probabilities(0.2, 0.1, 0.7)), "Is the deposit paid into a protected account?")
    assert answer.refused and answer.answer == REFUSAL_TEXT and answer.citations == []


def test_turned_off_a_yes_no_question_is_answered_the_ordinary_way(tmp_path: Path) -> None:
    llm = OneTokenLLM(probabilities(0.6, 0.35, 0.05))
    ask(tmp_path, llm, "May tenants keep a small dog?", polar_answers=False)
    assert llm.samplings[0].max_tokens > 1 and llm.samplings[0].grammar is not None


class ByPassageLLM(OneTokenLLM):
    """Reads the passage a sentence at a time: unsettled for one sentence, settled for the others."""

    def __init__(self, unsettled: str) -> None:
        super().__init__(probabilities(0.9, 0.05, 0.05))
        self.unsettled = unsettled

    def stream_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, on_queued: QueueListener | None = None
    ) -> Iterator[Token]:
        if self.unsettled in messages[1].content:
            self.calls.append(messages)
            yield Token(text="NONE", alternatives=probabilities(0.05, 0.05, 0.9))
            return
        yield from super().stream_tokens(messages, sampling, on_queued)


def test_of_the_sentences_read_the_one_that_settles_the_question_is_quoted(tmp_path: Path) -> None:
    llm = ByPassageLLM(unsettled="Tenants may keep one cat")
    answer = ask(tmp_path, llm, "May tenants keep a small dog?", polar_sentences=2)
    assert len(llm.calls) == 2
    assert answer.answer.startswith("Yes. The document says:") and "Tenants may keep" not in answer.answer
