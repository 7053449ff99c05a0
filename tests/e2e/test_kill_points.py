"""kill -9 at every point of replacing a document, on the embedded Chroma and on a Chroma server: a
real `ragchat ingest` process (tests/kill_point_child.py) stops dead at the point and is SIGKILLed.
Then, from a fresh start:
- a reader finds exactly one version of the document, whole (the old one, or the new one once the
  registry switched), never both, never a missing chunk, and writes nothing;
- re-running the ingest (`ragchat ingest` in the test's process) recovers what the killed run left
  (and says so) and completes;
- the registry, the vector store and BM25 hold the new version's chunks and nothing else."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.schemas import doc_id_for
from core.settings import get_settings
from ingestion.parsers import version_hash
from ragchat.application import open_session
from tests.cli_in_process import ragchat
from tests.e2e.test_ingest_consistency import ALPHA, assert_consistent, sources
from tests.e2e.test_ingest_kill import _reopen
from tests.e2e.test_many_processes import files_of
from tests.fixtures import long_pdf_bytes
from tests.kill_point_child import POINTS

OLD, NEW = "oldedition", "newedition"  # a word on every page of each version
DOC = "manual.pdf"
CHILD = Path(__file__).parents[1] / "kill_point_child.py"
BATCH = "8"  # chunks per embedding step: a 12-page file is written in several batches


def killed_at(point: str, path: Path, marker: Path) -> None:
    """Run `ragchat ingest path` until it reaches `point`, then SIGKILL it."""
    command = [sys.executable, str(CHILD), point, str(marker), "ingest", str(path), "--json"]
    env = {**os.environ, "RAGCHAT_INGEST_BATCH": BATCH}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            _, err = process.communicate()
            pytest.fail(f"the ingest never reached {point} (exit {process.returncode}): {err.decode()[-2000:]}")
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


def ours(home: Path) -> dict[str, int]:
    """Files of the registry, the write lock and BM25 with their mtimes (Chroma's own files are its business)."""
    return {k: v for k, v in files_of(home).items() if k != "chroma_db"} | files_of(get_settings().bm25_path)


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_while_replacing_a_document_loses_nothing(
    index_store: str, point: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_pdf, new_pdf = long_pdf_bytes(12, seed=1, marker=OLD), long_pdf_bytes(14, seed=2, marker=NEW)
    seeded = open_session(get_settings())
    assert seeded.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    old_row = seeded.ingest_bytes(DOC, old_pdf)
    assert old_row.status == "indexed"
    del seeded
    new_path = tmp_path / DOC
    new_path.write_bytes(new_pdf)

    killed_at(point, new_path, tmp_path / "reached")

    reader = _reopen()
    on_disk = ours(home)
    live = reader.document_index.registry.get(doc_id_for(DOC))
    assert live is not None, "the document is still registered"
    switched = point == "removing-replaced"
    assert live.content_hash == version_hash(new_pdf if switched else old_pdf, False)
    assert reader.document_index.store.count_version(live.doc_id, live.content_hash) == live.chunks, "none missing"
    assert switched or live.chunks == old_row.chunks
    left = version_hash(old_pdf if switched else new_pdf, False)
    assert reader.document_index.registry.unfinished() == [(live.doc_id, left)], "the killed run is journalled"
    if point in ("embedding", "version-switch"):
        assert reader.document_index.store.count_version(live.doc_id, left) > 0, "the kill left chunks behind"
    if point in ("bm25-write", "embedding"):
        assert reader.document_index.registry.waiting_total() > 0, "and chunks still to embed"
    if switched:
        assert len(reader.document_index.bm25) > reader.document_index.store.count(), "BM25 still holds the old one"
    found_old, found_new = sources(reader, OLD), sources(reader, NEW)
    assert (found_old, found_new) == ((set(), {DOC}) if switched else ({DOC}, set())), "one version, never both"
    assert ours(home) == on_disk, "a reader wrote to the home"
    del reader

    monkeypatch.setenv("RAGCHAT_INGEST_BATCH", BATCH)
    rerun = ragchat("ingest", str(new_path), "--json")  # a fresh session, in the test's process
    assert rerun.returncode == 0, rerun.stderr
    assert "recovered the index: removed 1 unfinished document version" in rerun.stderr
    [row] = json.loads(rerun.stdout)
    assert row["status"] == ("unchanged" if switched else "indexed")
    assert row["pages"] == 14

    final = _reopen()
    assert assert_consistent(final) == {"a.txt": 1, DOC: row["chunks"]}, "no orphan, missing or duplicate chunk"
    assert (sources(final, OLD), sources(final, NEW)) == (set(), {DOC})
