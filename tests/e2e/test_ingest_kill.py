"""kill -9 in the middle of a real `ragchat ingest` subprocess: nothing half-indexed is searchable,
the next start makes the registry, Chroma and BM25 agree again, and a rerun indexes the file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from core.schemas import doc_id_for
from core.settings import get_settings
from ragchat.application import open_session
from ragchat.session import Session
from tests.e2e.test_ingest_consistency import ALPHA, assert_consistent, sources
from tests.fixtures import long_pdf_bytes


def _stored_pages(db: Path, doc_id: str) -> int:
    """Pages of the unfinished version already stored: each batch is in Chroma before its pages are."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            (count,) = conn.execute("SELECT COUNT(*) FROM pages WHERE doc_id = ?", (doc_id,)).fetchone()
    except sqlite3.OperationalError:  # the table is created by the subprocess on its first start
        return 0
    return int(count)


def _reopen() -> Session:
    """A service as a fresh start sees it. Embedded Chroma caches one system per path in a process and
    does not see another process's writes, so the cache is dropped after a subprocess wrote."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    return open_session(get_settings())


def test_kill_9_mid_ingest_leaves_the_index_consistent(home: Path, tmp_path: Path) -> None:
    service = open_session(get_settings())
    assert service.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    del service
    big = tmp_path / "big.pdf"
    big.write_bytes(long_pdf_bytes(60, seed=3, marker="kilroy"))
    doc_id = doc_id_for("big.pdf")

    env = {**os.environ, "RAGCHAT_INGEST_BATCH": "16"}
    command = [sys.executable, "-m", "ragchat.cli", "ingest", str(big), "--json"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while _stored_pages(home / "ragchat.sqlite3", doc_id) == 0:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the ingest wrote nothing within 180 s"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL

    after = _reopen()
    leftovers = after.document_index.registry.unfinished()
    assert len(leftovers) == 1 and leftovers[0][0] == doc_id, "the killed run's version is journalled"
    assert after.document_index.registry.get(doc_id) is None, (
        "nothing of big.pdf is registered, so nothing of it is searchable"
    )
    partial = after.document_index.store.count_version(*leftovers[0])
    assert partial > 0, "the kill happened after some chunks were stored"

    assert sources(after, "kilroy") == set(), "the unfinished version is never searched"
    assert after.document_index.store.count_version(*leftovers[0]) == partial, "a reader writes nothing"
    assert after.open_index().recovered_versions == 1  # recovery is a write: it takes the write lock
    assert after.document_index.store.count_version(*leftovers[0]) == 0
    assert assert_consistent(after) == {"a.txt": 1}

    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    [row] = json.loads(rerun.stdout)
    assert (row["status"], row["pages"]) == ("indexed", 60)
    final = _reopen()
    assert assert_consistent(final) == {"a.txt": 1, "big.pdf": row["chunks"]}
    assert "big.pdf" in sources(final, "kilroy")
