"""Several real processes on one RAGCHAT_HOME: a reader during an ingest neither writes nor fails and
already finds the new document by keyword while it is being embedded; a second ingest waits its turn
(or, with --no-wait, says who is writing and exits 1); a delete from another process stops the
ingest's embedding and leaves nothing of the document; the files end up indexed with Chroma, BM25
and the registry in agreement. Each on the embedded Chroma and on a Chroma server. The long ingest,
the readers beside it and the second ingests are processes of their own; the commands before and
after them run in the test's process (tests/cli_in_process.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from core.schemas import doc_id_for
from core.settings import get_settings
from providers.chroma_views import view_of
from ragchat.application import open_session
from tests.cli_in_process import ragchat
from tests.e2e.test_ingest_consistency import ALPHA, assert_consistent, sources
from tests.e2e.test_ingest_kill import _embedding_state, _reopen
from tests.fixtures import long_pdf_bytes

BETA = "The night shift restocks the walk-in freezer before the morning deliveries arrive."


# Long enough (~20 s of embedding on the one thread a model-free test has: tests/conftest.py) for the
# other processes to start while it writes.
PAGES = 120


def started(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragchat.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finished(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def start_big_ingest(home: Path, tmp_path: Path) -> subprocess.Popen[str]:
    """A long ingest in another process, returned once the document is live and still being embedded."""
    big = tmp_path / "big.pdf"
    big.write_bytes(long_pdf_bytes(PAGES, seed=3, marker="kilroy"))
    env = {**os.environ, "RAGCHAT_INGEST_BATCH": "16"}
    process = subprocess.Popen(
        [sys.executable, "-m", "ragchat.cli", "ingest", str(big), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180
    while _embedding_state(home / "ragchat.sqlite3", doc_id_for("big.pdf")) is None:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the document was not searchable within 180 s"
        time.sleep(0.05)
    return process


def files_of(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in directory.iterdir()} if directory.exists() else {}


def test_a_document_is_searchable_by_keyword_from_another_process_before_it_is_embedded(
    index_store: str, home: Path, tmp_path: Path
) -> None:
    assert ragchat("ingest", str(_write(tmp_path / "a.txt", ALPHA))).returncode == 0
    settings = get_settings()
    writer = start_big_ingest(home, tmp_path)
    bm25_before = files_of(settings.bm25_path)

    search, docs = started("search", "kilroy", "--json"), started("docs")
    search, docs = finished(search), finished(docs)
    chunks, waiting = _embedding_state(home / "ragchat.sqlite3", doc_id_for("big.pdf")) or (0, 0)
    assert writer.poll() is None and waiting > 0, "the readers ran while the ingest was still embedding"
    assert search.returncode == 0, search.stderr
    assert "big.pdf" in {hit["source"] for hit in json.loads(search.stdout)}, "found before it is embedded"
    assert "keyword search only for big.pdf: semantic index" in search.stderr
    assert "rebuilding BM25" not in search.stderr + docs.stderr and "belong to no registered" not in docs.stderr
    assert docs.returncode == 0 and "a.txt" in docs.stdout and "big.pdf" in docs.stdout
    assert "keyword search only for now: semantic index" in docs.stdout
    assert "the ingest of big.pdf in another process" in docs.stderr
    assert files_of(settings.bm25_path) == bm25_before, "a reader changed the keyword index"

    out, err = writer.communicate(timeout=600)
    assert writer.returncode == 0, err
    [row] = json.loads(out)
    assert row["status"] == "indexed" and row["chunks"] == chunks
    assert 0 < row["searchable_s"] < row["seconds"], "searchable before it was fully indexed"
    after = ragchat("search", "kilroy", "--json")
    assert after.returncode == 0, after.stderr
    assert "big.pdf" in {hit["source"] for hit in json.loads(after.stdout)}
    assert "keyword search only" not in after.stderr
    assert assert_consistent(_reopen()) == {"a.txt": 1, "big.pdf": chunks}


def test_a_delete_from_another_process_stops_the_embedding_and_leaves_nothing(
    index_store: str, home: Path, tmp_path: Path
) -> None:
    assert ragchat("ingest", str(_write(tmp_path / "a.txt", ALPHA))).returncode == 0
    writer = start_big_ingest(home, tmp_path)
    deleted = ragchat("delete", "big.pdf")
    assert deleted.returncode == 0 and "deleted big.pdf" in deleted.stdout, deleted.stderr
    out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    [row] = json.loads(out)
    assert row["status"] == "cancelled" and "deleted" in row["error"], "it stopped, it did not finish"

    final = _reopen()
    assert final.document_index.registry.waiting_total() == 0
    assert assert_consistent(final) == {"a.txt": 1}, "no chunk of big.pdf is left in any store"
    assert sources(final, "kilroy") == set()


def test_a_second_ingest_waits_its_turn_or_says_who_writes(index_store: str, home: Path, tmp_path: Path) -> None:
    writer = start_big_ingest(home, tmp_path)
    beta = _write(tmp_path / "b.txt", BETA)

    refused = started("ingest", str(beta), "--no-wait", "--json")
    second = started("ingest", str(beta), "--json")  # waits for the first, then indexes
    refused, second = finished(refused), finished(second)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    [row] = json.loads(refused.stdout)
    assert row["status"] == "failed" and "the ingest of big.pdf in another process" in row["error"]
    assert writer.poll() is not None, "the second ingest finished before the first let go of the index"
    assert writer.wait(timeout=60) == 0
    assert second.returncode == 0, second.stderr
    assert "b.txt: waiting for the ingest of big.pdf in another process" in second.stderr
    assert json.loads(second.stdout)[0]["status"] == "indexed"

    final = _reopen()
    counts = assert_consistent(final)
    assert set(counts) == {"big.pdf", "b.txt"} and sources(final, "freezer deliveries") == {"b.txt"}


def test_a_long_lived_process_finds_by_meaning_what_another_process_indexed(home: Path, tmp_path: Path) -> None:
    """The app is one long-lived process: a document another process indexed after the app opened
    the embedded Chroma is found by meaning, and read by id, without a restart (chromadb keeps the
    vector index of a path in memory, once per process: providers/chroma_views.py)."""
    app = open_session(get_settings())
    assert app.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    assert app.search("alpha").hits, "the app has opened its index"
    view = view_of(get_settings().chroma_path)
    generation = view.generation
    assert app.ingest_bytes("c.txt", b"Invoices are paid within thirty days.").status == "indexed"
    assert view.generation == generation, "its own writes do not make it reopen Chroma"
    beta = _write(tmp_path / "b.txt", BETA)
    elsewhere = subprocess.run(
        [sys.executable, "-m", "ragchat.cli", "ingest", str(beta)], capture_output=True, text=True, timeout=300
    )
    assert elsewhere.returncode == 0, elsewhere.stderr

    store = app.document_index.store
    vector = app.app.retrieval_embedder.embed_query("Who fills the cold room overnight?")  # no word of BETA
    assert "b.txt" in {chunk.source for chunk, _ in store.query(vector, k=5)}, "found by meaning"
    assert view.generation == generation + 1, "reopened once"
    [chunk_id] = [chunk.chunk_id for chunk, _ in store.query(vector, k=5) if chunk.source == "b.txt"]
    assert set(store.get([chunk_id])) == {chunk_id}, "read by id"
    assert "b.txt" in {hit.chunk.source for hit in app.search("freezer deliveries").hits}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
