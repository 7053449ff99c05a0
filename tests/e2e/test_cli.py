"""The CLI end to end on the real parts: embedded Chroma, packaged fastembed model, 0.5B GGUF; each
command runs in the test's process (tests/cli_in_process.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.messages import REFUSAL_TEXT
from tests.cli_in_process import ragchat
from tests.fixtures import write_report_pdf


@pytest.fixture
def indexed(home: Path, tmp_path: Path) -> Path:
    pdf = write_report_pdf(tmp_path / "report.pdf")
    notes = tmp_path / "notes.md"
    notes.write_text("# Safety\n\n## Drills\nFire drills take place on the first Tuesday of each month.\n")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = ragchat("ingest", str(pdf), str(notes), str(empty), "--json")
    assert result.returncode == 1, "one file failed, so the exit code is 1"
    rows = {row["source"]: row for row in json.loads(result.stdout)}
    assert rows["report.pdf"]["status"] == "indexed" and rows["report.pdf"]["pages"] == 3
    assert rows["notes.md"]["status"] == "indexed" and rows["notes.md"]["chunks"] >= 1
    assert rows["notes.md"]["pages"] is None  # a text file has no pages
    assert rows["empty.txt"]["status"] == "failed" and "empty" in rows["empty.txt"]["error"]
    return pdf


def test_ingest_is_idempotent_and_docs_lists_files(indexed: Path) -> None:
    again = ragchat("ingest", str(indexed), "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)[0]["status"] == "unchanged"
    docs = json.loads(ragchat("docs", "--json").stdout)
    assert sorted(d["source"] for d in docs) == ["notes.md", "report.pdf"]


def test_search_single_and_batch(indexed: Path, tmp_path: Path) -> None:
    hits = json.loads(ragchat("search", "Westland Q2 revenue", "-k", "2", "--json").stdout)
    assert hits[0]["source"] == "report.pdf" and hits[0]["page"] == 2
    scores = hits[0]["scores"]
    assert {"bm25", "dense", "fused", "rerank"} <= set(scores)
    # Found by both retrievers; no cross-encoder is installed in the test home, so no rerank score.
    assert scores["bm25_rank"] >= 1 and scores["dense_rank"] >= 1 and scores["bm25"] > 0
    assert scores["rerank"] is None
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "text": "fire drills"}\n{"id": "b", "text": "cold storage plans"}\n')
    lines = [json.loads(line) for line in ragchat("search", "--queries", str(queries), "-k", "1").stdout.splitlines()]
    assert [(line["id"], line["hits"][0]["source"]) for line in lines] == [("a", "notes.md"), ("b", "report.pdf")]
    assert lines[1]["hits"][0]["page"] == 3
    drills = lines[0]["hits"][0]
    assert drills["page"] is None and drills["locator"] == "Safety › Drills · lines 3–4"


def test_ask_answers_from_a_table_cell_with_a_page_citation(indexed: Path) -> None:
    result = ragchat("ask", "What was the Q2 revenue of the Westland region?", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert not answer["refused"]
    assert "8.15" in answer["answer"]
    assert any(c["source"] == "report.pdf" and c["page"] == 2 for c in answer["citations"])
    cited = next(c for c in answer["citations"] if c["page"] == 2)
    assert "8.15" in cited["snippet"]
    assert "qwen2.5-coder-0.5b" in answer["models"]["llm"]
    assert answer["timings_ms"]["first_token_ms"] > 0


def test_unrelated_question_is_refused_without_citations(indexed: Path) -> None:
    answer = json.loads(ragchat("ask", "Who painted the Mona Lisa?", "--json").stdout)
    assert answer["refused"] is True
    assert answer["answer"] == REFUSAL_TEXT
    assert answer["citations"] == []


def test_delete_removes_a_document_from_search(indexed: Path) -> None:
    assert ragchat("delete", "report.pdf").returncode == 0
    hits = json.loads(ragchat("search", "Westland Q2 revenue", "--json").stdout)
    assert all(h["source"] != "report.pdf" for h in hits)
    assert ragchat("delete", "report.pdf").returncode == 1


def test_a_session_rewrites_follow_ups_and_persists(indexed: Path) -> None:
    first = json.loads(
        ragchat("ask", "What was the Q2 revenue of the Westland region?", "--session", "s1", "--json").stdout
    )
    assert first["session_id"] == "s1"
    assert first["search_query"] == first["question"]  # no history yet: no rewrite, no LLM call for it
    assert "rewrite_ms" not in first["timings_ms"]

    follow = ragchat("ask", "And in Q1?", "--session", "s1", "--json")
    assert follow.returncode == 0, follow.stderr
    second = json.loads(follow.stdout)
    assert second["question"] == "And in Q1?"
    assert second["search_query"] != "And in Q1?" and second["timings_ms"]["rewrite_ms"] > 0
    assert "westland" in second["search_query"].lower()  # the rewrite carries the subject over

    from core.settings import get_settings
    from rag.conversations import ConversationStore

    turns = ConversationStore(get_settings().db_path).history("s1")
    assert [t.question for t in turns] == [first["question"], "And in Q1?"]
    assert turns[1].search_query == second["search_query"]


def test_ask_about_a_whole_document_asks_back_among_several_and_takes_doc(indexed: Path) -> None:
    asked_back = json.loads(ragchat("ask", "What is this document about?", "--json").stdout)
    assert asked_back["document_request"]["method"] == "clarify" and not asked_back["refused"]
    assert "report.pdf" in asked_back["answer"] and "notes.md" in asked_back["answer"]
    result = ragchat("ask", "What is this document about?", "--doc", "notes.md", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["document_request"]["documents"] == ["notes.md"] and not answer["refused"]
    assert answer["citations"] and {c["source"] for c in answer["citations"]} == {"notes.md"}
