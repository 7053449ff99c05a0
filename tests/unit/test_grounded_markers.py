"""A grounded answer whose markers follow the full stop ("… Duncan. [1]", how the small models write
them): each marker is its sentence's, so the support check judges the sentence against the evidence
it cites and takes away a citation its evidence does not hold."""

from __future__ import annotations

from pathlib import Path

from core.schemas import Chunk, Hit, Retrieval, Scores
from core.settings import get_settings
from eval.metrics import model_cited_share
from rag.pipeline import AskOptions
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM

PASSAGES = [
    "King Malcolm III of Scotland married Margaret. Their son Duncan was kept as a hostage at the Norman court.",
    "Richard the Lion-hearted sailed for Acre in 1191, and a storm dispersed his fleet.",
]


class ConstrainedLLM(RecordingLLM):
    """Replies like the grammar-constrained embedded model: its markers are its own choice."""

    constrains = True


class TwoPassages:
    def search(self, query: str, top_k: int, *args: object, **kwargs: object) -> Retrieval:
        hits = [
            Hit(
                chunk=Chunk(
                    chunk_id=f"c{n}",
                    doc_id="d",
                    content_hash="h",
                    source="Normans.pdf",
                    file_type="pdf",
                    page=n,
                    chunk_index=n,
                    text=text,
                    char_start=0,
                    char_end=len(text),
                ),
                scores=Scores(dense=0.6 - n / 10),
            )
            for n, text in enumerate(PASSAGES, start=1)
        ]
        return Retrieval(query=query, hits=hits, candidates=hits, bm25_weight=0.5, fusion="convex", reranker="none")


def ask(tmp_path: Path, reply: str, question: str) -> object:
    llm = ConstrainedLLM(reply)
    pipeline = build_pipeline(get_settings(home=tmp_path), TwoPassages(), lambda: llm)
    return pipeline.ask(question, AskOptions()).result()


def test_a_supported_sentence_keeps_the_marker_it_wrote_after_its_full_stop(tmp_path: Path) -> None:
    answer = ask(tmp_path, "Phrase: Duncan\nAnswer: The hostage was Duncan. [1]\nMissing: NONE", "Who was the hostage?")
    assert not answer.refused
    assert answer.answer == "The hostage was Duncan [1]."
    assert [(c.marker, c.method, c.page) for c in answer.citations] == [(1, "marker", 1)]
    assert "Duncan" in answer.citations[0].snippet
    assert model_cited_share(answer) == 1.0


def test_a_sentence_its_evidence_does_not_hold_loses_the_marker_it_wrote_after_its_full_stop(tmp_path: Path) -> None:
    reply = "Phrase: Berengaria\nAnswer: The hostage was Berengaria. [1]\nMissing: NONE"
    answer = ask(tmp_path, reply, "Who was the hostage?")
    assert answer.answer == "The hostage was Berengaria."
    assert answer.citations == []
    assert [s.missing for s in answer.support] == [["Berengaria"]]
    assert model_cited_share(answer) == 0.0
