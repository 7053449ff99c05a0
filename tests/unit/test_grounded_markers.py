"""A grounded answer whose markers follow the full stop ("… Duncan. [1]", how the small models write
them): each marker is its sentence's, so the support check judges the sentence against the evidence
it cites and takes away a citation its evidence does not hold; an answer none of whose sentences its
evidence holds is withheld."""

from __future__ import annotations

from pathlib import Path

from core.schemas import Answer, Retrieval
from core.settings import get_settings
from eval.metrics import model_cited_share
from rag.messages import REFUSAL_TEXT
from rag.pipeline import AskOptions
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM
from tests.unit.test_citations import _hit

PASSAGES = [
    "King Malcolm III of Scotland married Margaret. Their son Duncan was kept as a hostage at the Norman court.",
    "Richard the Lion-hearted sailed for Acre in 1191, and a storm dispersed his fleet.",
]


class ConstrainedLLM(RecordingLLM):
    """Replies like the grammar-constrained embedded model: its markers are its own choice."""

    constrains = True


class TwoPassages:
    def languages(self, doc_ids: object = None) -> dict[str, int]:
        return {"en": 2}

    def search(self, query: str, top_k: int, *args: object, **kwargs: object) -> Retrieval:
        hits = [_hit(n, text, page=n) for n, text in enumerate(PASSAGES, start=1)]
        return Retrieval(query=query, hits=hits, candidates=hits, bm25_weight=0.5, fusion="convex", reranker="none")


def ask(tmp_path: Path, reply: str, question: str, **settings_overrides: object) -> Answer:
    """The pipeline's answer to `question` when the constrained model replies `reply`, with these settings."""
    llm = ConstrainedLLM(reply)
    settings = get_settings(home=tmp_path, **settings_overrides)
    pipeline = build_pipeline(settings, TwoPassages(), lambda: llm)
    return pipeline.ask(question, AskOptions()).result()


def test_a_supported_sentence_keeps_the_marker_it_wrote_after_its_full_stop(tmp_path: Path) -> None:
    answer = ask(tmp_path, "Phrase: Duncan\nAnswer: The hostage was Duncan. [1]\nMissing: NONE", "Who was the hostage?")
    assert not answer.refused
    assert answer.answer == "The hostage was Duncan [1]."
    assert [(c.marker, c.method, c.page) for c in answer.citations] == [(1, "marker", 1)]
    assert "Duncan" in answer.citations[0].snippet
    assert model_cited_share(answer) == 1.0


def test_an_answer_its_evidence_does_not_hold_is_withheld(tmp_path: Path) -> None:
    reply = "Phrase: Berengaria\nAnswer: The hostage was Berengaria. [1]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Who was the hostage?")
    assert answer.refused and answer.answer == REFUSAL_TEXT and answer.citations == []
    assert answer.withheld == "The hostage was Berengaria."
    assert [s.missing for s in answer.support] == [["Berengaria"]]

    # Turned off, it is shown flagged: the sentence keeps its words and loses the marker it wrote.
    shown = ask(tmp_path / "off", reply, "Who was the hostage?", withhold_unsupported=False)
    assert not shown.refused and shown.withheld is None
    assert shown.answer == "The hostage was Berengaria." and shown.citations == []
    assert model_cited_share(shown) == 0.0


def test_one_unsupported_sentence_of_two_loses_its_marker_and_the_answer_stays(tmp_path: Path) -> None:
    reply = (
        "Phrase: Duncan\nAnswer: The hostage was Duncan. [1] He was later crowned King of England. [1]\nMissing: NONE"
    )
    answer = ask(tmp_path, reply, "Who was the hostage?")
    assert not answer.refused and answer.withheld is None
    assert answer.answer == "The hostage was Duncan [1]. He was later crowned King of England."
    assert [c.marker for c in answer.citations] == [1]
    assert answer.unsupported_sentences == ["He was later crowned King of England."]
    assert model_cited_share(answer) == 0.5


def test_a_sentence_that_cites_the_wrong_excerpt_moves_to_the_one_that_holds_it(tmp_path: Path) -> None:
    reply = "Phrase: 1191\nAnswer: The hostage was Duncan. [2] A storm dispersed the fleet in 1191. [2]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Who was the hostage, and when did the storm hit?")
    assert not answer.refused and answer.unsupported_sentences == []
    assert answer.answer == "The hostage was Duncan [1]. A storm dispersed the fleet in 1191 [2]."
    assert [(c.marker, c.method, c.cited_as) for c in answer.citations] == [(1, "corrected", 2), (2, "marker", None)]
    assert "Duncan" in answer.citations[0].snippet
    assert model_cited_share(answer) == 0.5
