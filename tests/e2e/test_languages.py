"""French documents and questions on the real parts: the embedded 0.5B model, the packaged MiniLM, the
real Chroma and BM25 index. A French PDF's chunks carry `fr` and are stemmed as French; a French
question over it is answered in French (checked with the detector); a degenerate reply is never
shown as a cited answer (the reply comes from tests/ollama_fake.py on 127.0.0.1, as a real server
would send it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.language import LanguageDetector
from core.settings import get_settings
from rag.messages import message
from ragchat.application import open_session
from tests.fixtures import write_french_minutes_pdf
from tests.ollama_fake import FakeOllama


@pytest.fixture
def minutes(home: Path, tmp_path: Path) -> Path:
    pdf = write_french_minutes_pdf(tmp_path / "proces-verbal.pdf")
    assert open_session(get_settings(memory_enabled=False)).ingest_paths([pdf])[0].status == "indexed"
    return pdf


def test_a_french_pdf_is_indexed_as_french(minutes: Path) -> None:
    session = open_session(get_settings(memory_enabled=False))
    chunks = [c for batch in session.document_index.store.iter_chunks() for c in batch]
    assert chunks and {c.lang for c in chunks} == {"fr"}
    # "agrandir" meets "agrandissement" only through the French stemmer (English keeps "agrandir").
    found = session.search("agrandir", k=3, bm25_weight=1.0).hits
    assert found and "agrandissement" in found[0].chunk.text


def test_a_french_question_gets_a_french_cited_answer(minutes: Path) -> None:
    answer = open_session(get_settings(memory_enabled=False)).ask("Combien de logements le projet ajoute-t-il ?")
    assert answer.language == "fr"
    assert not answer.refused and answer.degenerate is None, answer.answer
    assert LanguageDetector()(answer.answer) == "fr", answer.answer
    assert "43" in answer.answer and answer.citations, answer.answer


def test_a_degenerate_reply_is_refused_with_a_notice_in_the_question_language(
    minutes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = ["Le coût estimé des travaux", " [1]", " [2][3] [4]", " " * 140, "[9"]
    with FakeOllama(reply=reply) as server:
        monkeypatch.setenv("RAGCHAT_LLM_PROVIDER", "ollama")
        monkeypatch.setenv("RAGCHAT_LLM_MODEL", "llama3.2")
        monkeypatch.setenv("OLLAMA_HOST", server.host)
        session = open_session(get_settings(memory_enabled=False))
        stream = session.ask_stream("Quel est le coût estimé des travaux de rénovation ?")
        "".join(stream.tokens())
        answer = stream.result()
    assert server.requests, "the model was asked"
    assert answer.degenerate == "mostly whitespace"
    assert answer.refused and answer.citations == [] and answer.answer == message("fr", "degenerate")
