"""Re-upload, replace, delete, cancel, rebuild: the registry, Chroma and BM25 must always agree, on
the real stores and the real embedder."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from core.schemas import IngestProgress
from core.settings import get_settings
from ingestion.errors import IndexOutOfDate
from ragchat.application import open_session
from ragchat.session import Session
from tests.fixtures import encrypted_pdf_bytes, long_pdf_bytes, scanned_pdf_bytes

ALPHA = "The zebra crossing near the harbour office was repainted in March. Staff praised the new lights."
BETA = "The quokka enclosure opened in June. Visitors queued for an hour to see the animals."


def assert_consistent(session: Session) -> dict[str, int]:
    """Every stored chunk belongs to a live version, Chroma and BM25 hold the same chunk ids, and
    each document has as many chunks as its registry row says. Returns chunks per source."""
    live = {r.doc_id: r for r in session.documents()}
    chroma = [c for batch in session.document_index.store.iter_chunks() for c in batch]
    assert session.document_index.store.count() == len(chroma), "every vector has its chunk's text"
    assert {c.chunk_id for c in chroma} == session.document_index.bm25.live_ids()
    assert all(live[c.doc_id].content_hash == c.content_hash for c in chroma if c.doc_id in live)
    assert all(c.doc_id in live for c in chroma), "no chunk of a deleted or unfinished version"
    per_doc = Counter(c.doc_id for c in chroma)
    assert {doc_id: r.chunks for doc_id, r in live.items()} == dict(per_doc)
    assert session.document_index.registry.unfinished(include_running=True) == []
    return {live[d].source: n for d, n in per_doc.items()}


def sources(session: Session, query: str) -> set[str]:
    return {h.chunk.source for h in session.search(query, k=10, bm25_weight=1.0).hits}


def test_reupload_replace_and_delete_keep_the_stores_in_step(home: Path) -> None:
    session = open_session(get_settings())
    first = session.ingest_bytes("a.txt", ALPHA.encode())
    assert first.status == "indexed"
    assert session.ingest_bytes("copy-of-a.txt", ALPHA.encode()).status == "indexed"
    assert sorted(d.source for d in session.documents()) == ["a.txt", "copy-of-a.txt"]
    before = assert_consistent(session)

    again = session.ingest_bytes("a.txt", ALPHA.encode())
    assert (again.status, again.chunks) == ("unchanged", first.chunks)
    assert assert_consistent(session) == before

    replaced = session.ingest_bytes("a.txt", BETA.encode())
    assert replaced.status == "indexed"
    assert_consistent(session)
    assert sources(session, "zebra crossing") == {"copy-of-a.txt"}, "no stale chunk of the old a.txt"
    assert sources(session, "quokka enclosure") == {"a.txt"}

    assert session.delete("a.txt")
    assert_consistent(session)
    assert sources(session, "quokka enclosure") == set()
    assert not session.delete("a.txt")
    assert [d.source for d in session.documents()] == ["copy-of-a.txt"]


def _stop_after_first_batch(cancel: threading.Event):
    def progress(update: IngestProgress) -> None:
        if update.stage.startswith("embedding"):
            cancel.set()

    return progress


def test_cancel_leaves_the_index_exactly_as_before(home: Path) -> None:
    session = open_session(get_settings(ingest_batch=16))
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    assert session.ingest_bytes("book.pdf", long_pdf_bytes(3, marker="firstedition")).status == "indexed"
    before_ids = session.document_index.bm25.live_ids()
    before_docs = session.documents()
    before_pages = list(session.document_index.registry.pages(before_docs[1].doc_id, before_docs[1].content_hash))

    for name in ("new.pdf", "book.pdf"):  # a new file, and a new version of an indexed one
        cancel = threading.Event()
        result = session.ingest_bytes(
            name, long_pdf_bytes(30, seed=5, marker="secondedition"), _stop_after_first_batch(cancel), cancel=cancel
        )
        assert result.status == "cancelled"
        assert session.document_index.bm25.live_ids() == before_ids
        assert session.documents() == before_docs
        assert assert_consistent(session) == {"a.txt": 1, "book.pdf": before_docs[1].chunks}
    assert (
        list(session.document_index.registry.pages(before_docs[1].doc_id, before_docs[1].content_hash)) == before_pages
    )
    assert sources(session, "firstedition") == {"book.pdf"}
    assert sources(session, "secondedition") == set()


def test_progress_counts_pages_with_an_eta(home: Path) -> None:
    session = open_session(get_settings(ingest_batch=8))
    updates: list[IngestProgress] = []
    result = session.ingest_bytes("twelve.pdf", long_pdf_bytes(12), updates.append)
    assert result.status == "indexed" and result.pages == 12
    paged = [u for u in updates if u.pages_total]
    assert {u.pages_total for u in paged} == {12}
    done = [u.pages_done for u in paged]
    assert done == sorted(done) and done[-1] == 12
    assert any(u.eta_s is not None and u.eta_s > 0 for u in paged)
    assert updates[-1].stage == "indexed"


def test_a_settings_change_asks_for_a_rebuild_and_the_rebuild_fixes_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = open_session(get_settings())
    text = " ".join(f"Sentence {i} says the depot {i} handles freight route {i}." for i in range(80))
    assert session.ingest_bytes("routes.md", f"# Routes\n\n{text}\n".encode()).status == "indexed"
    assert session.index_problems() == []
    chunks_before = session.documents()[0].chunks

    monkeypatch.setenv("RAGCHAT_CHUNK_SIZE", "80")
    changed = open_session(get_settings())
    assert changed.index_problems() == ["chunk_size: 200 → 80"]
    with pytest.raises(IndexOutOfDate, match="rebuild"):
        changed.search("freight route 7")
    refused = changed.ingest_bytes("other.txt", b"More text about depots.")
    assert refused.status == "failed" and "ragchat reindex" in (refused.error or "")

    rebuilt = changed.reindex()
    assert [(r.source, r.status) for r in rebuilt] == [("routes.md", "indexed")]
    assert changed.index_problems() == []
    assert changed.documents()[0].chunks > chunks_before
    assert assert_consistent(changed) == {"routes.md": rebuilt[0].chunks}
    hit = changed.search("freight route 7", k=1).hits[0]
    assert hit.chunk.heading_path == ["Routes"]


def test_redaction_is_opt_in_and_reported(home: Path) -> None:
    session = open_session(get_settings())
    text = "Escalations go to dana.kim@example.org or +1 (555) 013-2288. The server is 10.20.30.40."
    plain = session.ingest_bytes("contacts.txt", text.encode())
    assert plain.status == "indexed" and not plain.redacted and plain.redactions == 0

    redacted = session.ingest_bytes("contacts.txt", text.encode(), redact=True)
    assert redacted.status == "indexed", "the same bytes with redaction on are a new version"
    assert (redacted.redacted, redacted.redactions) == (True, 3)
    assert_consistent(session)
    stored = [c.text for batch in session.document_index.store.iter_chunks() for c in batch]
    assert not any("dana.kim" in t or "013-2288" in t or "10.20.30.40" in t for t in stored)
    report = session.redactions("contacts.txt")
    assert [r.kind for r in report] == ["email", "phone", "ip"]
    assert all(r.placeholder in stored[0] for r in report)
    assert session.ingest_bytes("contacts.txt", text.encode(), redact=True).status == "unchanged"


def test_encrypted_and_scanned_pdfs(home: Path) -> None:
    session = open_session(get_settings())
    data = encrypted_pdf_bytes("s3cret", "The vault code is kept by the night supervisor.")
    locked = session.ingest_bytes("vault.pdf", data)
    assert (locked.status, locked.needs_password) == ("failed", True)
    wrong = session.ingest_bytes("vault.pdf", data, password="nope")
    assert wrong.needs_password and "wrong" in (wrong.error or "")
    assert session.ingest_bytes("vault.pdf", data, password="s3cret").status == "indexed"
    assert sources(session, "vault code night supervisor") == {"vault.pdf"}

    scan = session.ingest_bytes("scan.pdf", scanned_pdf_bytes(["Pallet audit passed on Friday"], blank_pages=1))
    assert scan.status == "indexed", scan.error
    assert (scan.no_text_pages, scan.ocr_pages) == ([1, 2], [1])
    assert "page 1: no text layer, read with Tesseract OCR" in scan.warnings
    assert any(w.startswith("page 2: no text, not searchable (OCR found no text") for w in scan.warnings)
    assert "scan.pdf" in sources(session, "pallet audit Friday")
    assert_consistent(session)


def test_background_jobs_run_report_and_cancel(home: Path) -> None:
    session = open_session(get_settings(ingest_batch=16))
    small = session.jobs.submit("a.txt", ALPHA.encode())
    big = session.jobs.submit("big.pdf", long_pdf_bytes(40, seed=9))
    view = session.jobs.wait(small, timeout=120)
    assert view is not None and view.state == "done" and view.result and view.result.status == "indexed"
    for _ in range(600):  # bounded: until the big file has some pages done
        running = session.jobs.view(big)
        assert running is not None
        if running.state == "running" and running.progress.pages_done > 0:
            break
        threading.Event().wait(0.05)
    session.jobs.cancel(big)
    final = session.jobs.wait(big, timeout=120)
    assert final is not None and final.result is not None
    assert final.result.status == "cancelled"
    assert not session.jobs.busy()
    assert assert_consistent(session) == {"a.txt": 1}

    locked = session.jobs.submit("vault.pdf", encrypted_pdf_bytes("pw", "Sealed text about berths."))
    needs = session.jobs.wait(locked, timeout=60)
    assert needs is not None and needs.result is not None and needs.result.needs_password
    retried = session.jobs.retry_with_password(locked, "pw")
    assert retried is not None
    done = session.jobs.wait(retried, timeout=120)
    assert done is not None and done.result is not None and done.result.status == "indexed"


def _until_searchable(session: Session, job_id: str) -> None:
    for _ in range(2400):  # bounded: until the document is live and still being embedded
        view = session.jobs.view(job_id)
        assert view is not None and view.state != "done", "the job finished before it was seen embedding"
        if view.progress.searchable and view.progress.embedding:
            return
        threading.Event().wait(0.05)
    raise AssertionError("the document never became searchable")


def test_in_the_app_a_delete_or_a_newer_upload_stops_the_embedding(home: Path) -> None:
    session = open_session(get_settings(ingest_batch=16))
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"

    first = session.jobs.submit("big.pdf", long_pdf_bytes(40, seed=9, marker="kilroy"))
    _until_searchable(session, first)
    assert "big.pdf" in sources(session, "kilroy"), "searchable by keyword while it is embedded"
    partial = session.search("kilroy", k=10, bm25_weight=1.0).still_embedding
    assert [p.source for p in partial] == ["big.pdf"] and partial[0].embedded_fraction < 1.0
    newer = session.jobs.submit("big.pdf", long_pdf_bytes(30, seed=10, marker="kilroy"))
    stopped = session.jobs.wait(first, timeout=120)
    assert stopped is not None and stopped.result is not None and stopped.result.status == "cancelled"
    _until_searchable(session, newer)
    assert session.delete("big.pdf"), "the delete does not wait for the embedding to finish"
    deleted = session.jobs.wait(newer, timeout=120)
    assert deleted is not None and deleted.result is not None
    assert (deleted.result.status, "deleted" in (deleted.result.error or "")) == ("cancelled", True)
    assert session.document_index.registry.waiting_total() == 0
    assert assert_consistent(session) == {"a.txt": 1}, "nothing of either upload is left"
    assert sources(session, "kilroy") == set()


def test_the_worker_gives_freed_memory_back_when_idle(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragchat.ingest_jobs

    trimmed = threading.Event()
    monkeypatch.setattr(ragchat.ingest_jobs, "give_back_free_memory", trimmed.set)
    session = open_session(get_settings())
    job = session.jobs.submit("a.txt", ALPHA.encode())
    view = session.jobs.wait(job, timeout=120)
    assert view is not None and view.result and view.result.status == "indexed"
    assert trimmed.wait(10), "the worker fell idle without giving the jobs' freed memory back"
