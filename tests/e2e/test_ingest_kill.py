"""kill -9 in the middle of a real `ragchat ingest` subprocess of a new document, while it embeds:
the document is already searchable by keyword and stays so, partly embedded, and consistent; a
reader writes nothing; rerunning the ingest finishes the embedding (nothing is read or embedded
twice) and leaves the registry, Chroma and BM25 in step. (A kill while a replacing version is written
is tests/e2e/test_kill_points.py.)"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.schemas import doc_id_for
from core.settings import get_settings
from ragchat.application import open_session
from ragchat.session import Session
from tests.e2e.test_ingest_consistency import ALPHA, assert_consistent, sources
from tests.fixtures import long_pdf_bytes


def _embedding_state(db: Path, doc_id: str) -> tuple[int, int] | None:
    """(chunks, chunks still to embed) of the document once it is live, else None."""
    if not db.exists():
        return None
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            row = conn.execute("SELECT chunks, pending_chunks FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
    except sqlite3.OperationalError:  # the table is created by the subprocess on its first start
        return None
    return (int(row[0]), int(row[1])) if row else None


def _reopen() -> Session:
    """A new session in the test's process, after another process wrote: it sees what a fresh start
    would (providers/chroma_views.py)."""
    return open_session(get_settings())


@pytest.mark.parametrize("finish", ["resume", "ingest again"])
def test_kill_9_while_embedding_leaves_a_keyword_searchable_document(home: Path, tmp_path: Path, finish: str) -> None:
    session = open_session(get_settings())
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    del session
    big = tmp_path / "big.pdf"
    big.write_bytes(long_pdf_bytes(60, seed=3, marker="kilroy"))
    doc_id = doc_id_for("big.pdf")

    env = {**os.environ, "RAGCHAT_INGEST_BATCH": "16"}
    command = [sys.executable, "-m", "ragchat.cli", "ingest", str(big), "--json"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while (state := _embedding_state(home / "ragchat.sqlite3", doc_id)) is None or state[1] == state[0]:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the ingest embedded nothing within 180 s"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL

    after = _reopen()
    record = after.document_index.registry.get(doc_id)
    assert record is not None and 0 < record.pending_chunks < record.chunks, "live, partly embedded"
    embedded = after.document_index.store.count_version(doc_id, record.content_hash)
    assert embedded >= record.chunks - record.pending_chunks > 0
    assert len(after.document_index.bm25) == record.chunks + 1, "every chunk is in the keyword index"
    assert "big.pdf" in sources(after, "kilroy"), "searchable by keyword while partly embedded"
    assert after.document_index.store.count_version(doc_id, record.content_hash) == embedded, "a reader writes nothing"
    assert after.open_index().recovered_versions == 0, "a live document is not an unfinished version"

    docs = subprocess.run([sys.executable, "-m", "ragchat.cli", "docs"], capture_output=True, text=True, timeout=120)
    assert "`ragchat resume` finishes it" in docs.stdout, docs.stdout
    if finish == "resume":
        command = [sys.executable, "-m", "ragchat.cli", "resume", "--json"]
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    [row] = json.loads(rerun.stdout)
    assert (row["status"], row["chunks"]) == ("indexed", record.chunks)
    if finish == "ingest again":
        assert row["pages"] == 60
    final = _reopen()
    assert final.document_index.registry.get(doc_id).pending_chunks == 0
    assert final.document_index.registry.waiting_total() == 0
    assert assert_consistent(final) == {"a.txt": 1, "big.pdf": record.chunks}
    assert "big.pdf" in sources(final, "kilroy")
    again = subprocess.run([sys.executable, "-m", "ragchat.cli", "resume"], capture_output=True, text=True, timeout=120)
    assert (again.returncode, again.stdout.strip()) == (0, "Nothing to finish: every document is fully indexed.")
