"""Hybrid retrieval on the real parts (embedded Chroma, packaged fastembed model): BM25 and Chroma stay
in step through add, re-upload and delete, survive a restart, and the reranker is reported honestly."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from core.schemas import Answer, ModelInfo
from core.settings import get_settings
from rag.pipeline import AskOptions
from ragchat.application import open_session
from ragchat.session import Session
from tests.conftest import TINY_RERANKER_DIR
from tests.fixtures import write_report_pdf

PARTS = (
    "# Parts list\n\n"
    "Replacement pump seal X-7734 fits the 2019 compressor.\n\n"
    "The coolant filter must be changed every 500 operating hours.\n"
)


@pytest.fixture
def session(home: Path, tmp_path: Path) -> Session:
    session = open_session(get_settings())
    assert session.ingest_paths([write_report_pdf(tmp_path / "report.pdf")])[0].status == "indexed"
    assert session.ingest_bytes("parts.md", PARTS.encode()).status == "indexed"
    return session


def in_step(session: Session) -> bool:
    return (
        len(session.document_index.bm25)
        == session.document_index.store.count()
        == sum(d.chunks for d in session.documents())
    )


def test_exact_codes_are_found_by_bm25_and_every_candidate_explains_itself(session: Session) -> None:
    result = session.search("X-7734 seal", k=3)
    top = result.hits[0]
    assert top.chunk.source == "parts.md" and "X-7734" in top.chunk.text
    assert top.scores.bm25_rank == 1 and top.scores.bm25 and top.scores.bm25 > 0
    assert all(h.scores.dense is not None and h.scores.fused is not None for h in result.candidates)
    assert result.reranker.startswith("none (") and all(h.scores.rerank is None for h in result.candidates)
    assert {"embed_ms", "bm25_ms", "dense_ms", "search_ms"} <= set(result.timings_ms)


def test_weights_zero_and_one_reduce_to_one_retriever(session: Session) -> None:
    dense = session.search("how often is the filter replaced", k=5, bm25_weight=0.0).hits
    assert dense and all(h.scores.bm25_rank is None and h.scores.dense_rank for h in dense)
    assert [h.scores.dense_rank for h in dense] == list(range(1, len(dense) + 1))
    keyword = session.search("how often is the filter replaced", k=5, bm25_weight=1.0).hits
    assert keyword and all(h.scores.dense_rank is None and h.scores.bm25_rank for h in keyword)
    assert [h.scores.bm25_rank for h in keyword] == list(range(1, len(keyword) + 1))


def test_add_reupload_and_delete_keep_bm25_and_chroma_in_step(session: Session) -> None:
    assert in_step(session)
    new_version = PARTS.replace("X-7734", "Z-9100")
    assert session.ingest_bytes("parts.md", new_version.encode()).status == "indexed"
    assert in_step(session)
    assert session.search("X-7734", k=3, bm25_weight=1.0).hits == []
    assert "Z-9100" in session.search("Z-9100", k=1, bm25_weight=1.0).hits[0].chunk.text
    assert session.delete("parts.md")
    assert in_step(session)
    assert session.search("Z-9100", k=3, bm25_weight=1.0).hits == []


def test_bm25_is_loaded_at_restart_and_rebuilt_if_lost(session: Session) -> None:
    before = [h.chunk.chunk_id for h in session.search("seal compressor", k=4).candidates]
    restarted = open_session(get_settings())
    assert len(restarted.document_index.bm25) == session.document_index.store.count()
    assert [h.chunk.chunk_id for h in restarted.search("seal compressor", k=4).candidates] == before

    shutil.rmtree(session.settings.bm25_path)
    recovered = open_session(get_settings())
    assert recovered.search("X-7734", k=3, bm25_weight=1.0).hits == []
    assert not session.settings.bm25_path.exists(), "a search writes nothing, not even an empty index"
    recovered.open_index()  # the next write (here recovery itself) rebuilds BM25 from the stored chunks
    assert [h.chunk.chunk_id for h in recovered.search("seal compressor", k=4).candidates] == before
    assert in_step(recovered)


def test_reranker_fixture_runs_in_the_pipeline(home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGCHAT_RERANKER_DIR", str(TINY_RERANKER_DIR))
    monkeypatch.setenv("RAGCHAT_RERANKER_MODEL", "ms-marco-TinyBERT-L-2-v2")
    session = open_session(get_settings())
    session.ingest_paths([write_report_pdf(tmp_path / "report.pdf")])
    result = session.search("forklift operators certification", k=2)
    assert result.reranker == "flashrank · ms-marco-TinyBERT-L-2-v2"
    assert "rerank_ms" in result.timings_ms
    rerank = [h.scores.rerank for h in result.candidates]
    assert all(r is not None for r in rerank) and rerank == sorted(rerank, reverse=True)
    assert "Forklift" in result.hits[0].chunk.text
    assert session.search("forklift", k=2, rerank=False).reranker == "none (turned off for this search)"
    assert session.models().reranker == "flashrank · ms-marco-TinyBERT-L-2-v2"


def test_a_follow_up_still_searches_when_the_model_server_is_down(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewriting needs the LLM; with Ollama unreachable the search uses the previous query plus the
    follow-up, and the answer reports the model error instead of crashing."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]  # nothing listens here once the socket is closed
    monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "ollama")
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port}")
    offline = open_session(get_settings())
    earlier = offline.search("Westland Q2 revenue")  # builds the index handles before the turn is stored
    assert earlier.hits
    first = Answer(
        question="What was the Q2 revenue of the Westland region?",
        search_query="What was the Q2 revenue of the Westland region?",
        answer="8.15 million [1].",
        refused=False,
        models=ModelInfo(llm="m", embedder="e", reranker="none"),
    )
    offline.conversations.append("s-offline", first)
    answer = offline.ask("And in Q1?", AskOptions(session_id="s-offline"))
    assert answer.search_query == f"{first.question} And in Q1?"
    assert answer.error and not answer.refused
    assert answer.answer.startswith("The model could not answer")
    assert [t.question for t in offline.conversations.history("s-offline")] == [first.question, "And in Q1?"]


def test_a_first_search_whose_embedder_cannot_load_fails_with_its_reason(session: Session, tmp_path: Path) -> None:
    """A first search loads the embedder in a background thread while Chroma opens; a model that cannot
    load fails the search itself with its error, not silently in that thread."""
    broken = open_session(get_settings(embed_model_path=tmp_path / "no-such-model"))
    with pytest.raises(Exception, match="no-such-model"):
        broken.search("coolant filter", k=3)
    assert session.search("coolant filter", k=3).hits, "the working session is untouched"


def test_a_search_kept_to_chosen_documents_finds_nothing_of_the_others(session: Session) -> None:
    parts = next(d for d in session.documents() if d.source == "parts.md")
    retriever = session.document_index.retriever
    for weight in (0.0, 0.5, 1.0):  # the dense half, both, the keyword half
        everywhere = retriever.search("X-7734 seal compressor report", 10, weight)
        assert {h.chunk.source for h in everywhere.candidates} == {"parts.md", "report.pdf"}, weight
        kept = retriever.search("X-7734 seal compressor report", 10, weight, doc_ids=frozenset({parts.doc_id}))
        assert kept.candidates and {h.chunk.source for h in kept.candidates} == {"parts.md"}, weight


def test_a_question_with_a_document_chosen_is_answered_from_it_alone(session: Session) -> None:
    answer = session.ask("Which pump seal fits the 2019 compressor?", AskOptions(documents=("report.pdf",)))
    assert answer.candidates and {h.chunk.source for h in answer.candidates} == {"report.pdf"}
    assert "X-7734" not in answer.answer
    unknown = session.ask("Which pump seal fits the 2019 compressor?", AskOptions(documents=("nope.pdf",)))
    assert "nope.pdf" in unknown.answer and not unknown.citations


MANUAL = (
    "# Pump manual\n\n"
    "## Contents\n\n"
    "Safety . . . . . . . . 2\n"
    "Pump maintenance . . . . . . . . 3\n"
    "Filter replacement . . . . . . . . 4\n"
    "Warranty . . . . . . . . 5\n\n"
    "## Safety\n\nAlways switch the power off before opening the pump housing.\n\n"
    "## Pump maintenance\n\nGrease the pump bearing every 200 operating hours.\n\n"
    "## Filter replacement\n\nReplace the coolant filter every 500 operating hours.\n\n"
    "## Warranty\n\nThe warranty on the pump lasts two years from delivery.\n"
)


def test_search_and_ask_go_through_the_same_door(home: Path) -> None:
    """`ragchat search` and a question retrieve alike: same candidates, and neither puts the contents
    page (which matches every topic it lists and states nothing) among its hits or evidence."""
    session = open_session(get_settings())
    assert session.ingest_bytes("manual.md", MANUAL.encode()).status == "indexed"
    question = "What does the manual say about pump maintenance and filter replacement?"
    found = session.search(question)
    contents = [h.chunk.chunk_id for h in found.candidates if "Contents" in h.chunk.heading_path]
    assert contents, "the contents page is a candidate: it shares the question's words"
    assert found.hits and not set(contents) & {h.chunk.chunk_id for h in found.hits}
    answer = session.ask(question)
    assert [h.chunk.chunk_id for h in answer.candidates] == [h.chunk.chunk_id for h in found.candidates]
    assert answer.given.evidence and not set(contents) & {h.chunk.chunk_id for h in answer.given.hits}
