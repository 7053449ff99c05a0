from __future__ import annotations

from pathlib import Path

from core.schemas import Chunk, DocumentRecord, doc_id_for
from ingestion.registry import Registry, now


def _record(source: str, content_hash: str, chunks: int = 3) -> DocumentRecord:
    return DocumentRecord(
        doc_id=doc_id_for(source),
        source=source,
        file_type="pdf",
        content_hash=content_hash,
        size_bytes=10,
        pages=2,
        chunks=chunks,
        ingested_at=now(),
    )


def test_put_get_replace_delete(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "r.sqlite3")
    registry.put(_record("a.pdf", "h1"))
    registry.put(_record("b.pdf", "h1"))
    assert [r.source for r in registry.all()] == ["a.pdf", "b.pdf"]
    registry.put(_record("a.pdf", "h2", chunks=5))
    got = registry.get(doc_id_for("a.pdf"))
    assert got is not None and got.content_hash == "h2" and got.chunks == 5
    assert len(registry.all()) == 2
    assert registry.live_versions() == {doc_id_for("a.pdf"): "h2", doc_id_for("b.pdf"): "h1"}
    assert registry.delete(doc_id_for("a.pdf"))
    assert not registry.delete(doc_id_for("a.pdf"))
    assert registry.get(doc_id_for("a.pdf")) is None


def test_registry_persists_across_instances(tmp_path: Path) -> None:
    Registry(tmp_path / "r.sqlite3").put(_record("a.pdf", "h1"))
    again = Registry(tmp_path / "r.sqlite3").get(doc_id_for("a.pdf"))
    assert again is not None and again.ingested_at.tzinfo is not None


def test_live_versions_follow_writes_from_other_connections(tmp_path: Path) -> None:
    """The map is cached per search, but a commit by any connection (another process's ingest) shows."""
    reader, writer = Registry(tmp_path / "r.sqlite3"), Registry(tmp_path / "r.sqlite3")
    writer.put(_record("a.txt", "h1"))
    assert reader.live_versions() == {doc_id_for("a.txt"): "h1"}
    writer.put(_record("a.txt", "h2"))
    writer.put(_record("b.txt", "h3"))
    assert reader.live_versions() == {doc_id_for("a.txt"): "h2", doc_id_for("b.txt"): "h3"}
    writer.delete(doc_id_for("a.txt"))
    assert reader.live_versions() == {doc_id_for("b.txt"): "h3"}


def test_switch_journals_the_replaced_version_and_drops_its_pages(tmp_path: Path) -> None:
    from core.schemas import Page, Redaction

    registry = Registry(tmp_path / "r.sqlite3")
    doc = doc_id_for("a.pdf")
    registry.begin_version(doc, "h1")
    assert registry.unfinished() == [], "a version this (running) process is writing is not a leftover"
    assert registry.unfinished(include_running=True) == [(doc, "h1")]
    redaction = Redaction(page=1, kind="ip", placeholder="[IP_1]", preview="1.•")
    registry.add_pages(doc, "h1", [Page(number=1, text="one")], [redaction])
    assert registry.switch(_record("a.pdf", "h1")) is None
    assert registry.unfinished(include_running=True) == []
    assert [p.text for p in registry.pages(doc, "h1")] == ["one"]
    assert [r.placeholder for r in registry.redactions(doc)] == ["[IP_1]"]

    registry.begin_version(doc, "h2")
    registry.add_pages(doc, "h2", [Page(number=1, text="two")], [])
    assert registry.switch(_record("a.pdf", "h2")) == "h1"
    assert registry.unfinished() == [(doc, "h1")], "the old version's chunks are still to be deleted"
    assert not registry.has_pages(doc, "h1") and registry.redactions(doc) == []
    registry.abandon(doc, "h1")
    assert registry.unfinished() == [] and registry.has_pages(doc, "h2")


def test_a_version_left_by_a_dead_process_is_a_leftover(tmp_path: Path) -> None:
    import sqlite3
    import subprocess
    import sys

    registry = Registry(tmp_path / "r.sqlite3")
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(done.stdout)
    with sqlite3.connect(tmp_path / "r.sqlite3") as conn:
        conn.execute("INSERT INTO unfinished VALUES (?, ?, ?)", ("d1", "h9", dead_pid))
    assert registry.unfinished() == [("d1", "h9")]
    registry.abandon("d1", "h9")
    assert registry.unfinished(include_running=True) == []


def test_delete_journals_the_version_and_returns_it(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "r.sqlite3")
    registry.put(_record("a.pdf", "h1"))
    assert registry.delete(doc_id_for("a.pdf")) == "h1"
    assert registry.unfinished() == [(doc_id_for("a.pdf"), "h1")]
    assert registry.delete(doc_id_for("a.pdf")) is None


def test_manifest_and_rebuild_flag(tmp_path: Path) -> None:
    from core.schemas import IndexManifest

    registry = Registry(tmp_path / "r.sqlite3")
    assert registry.manifest() is None
    manifest = IndexManifest(embed_model="m", chunk_size=200, chunk_overlap=30, chunker=2)
    registry.start_rebuild()
    assert registry.rebuild_started()
    registry.set_manifest(manifest)
    assert not registry.rebuild_started()
    assert Registry(tmp_path / "r.sqlite3").manifest() == manifest
    wanted = manifest.model_copy(update={"chunk_size": 300})
    assert manifest.differences(wanted) == ["chunk_size: 200 → 300"]


def test_notes_survive_the_round_trip(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "r.sqlite3")
    record = _record("scan.pdf", "h1").model_copy(
        update={"no_text_pages": [2, 3], "ocr_pages": [2], "warnings": ["page 3 has no text"], "redactions": 4}
    )
    registry.put(record)
    got = registry.get(doc_id_for("scan.pdf"))
    assert got is not None
    assert (got.no_text_pages, got.ocr_pages, got.warnings, got.redactions) == ([2, 3], [2], ["page 3 has no text"], 4)


def test_chunks_to_embed_come_in_order_from_a_position_on(tmp_path: Path) -> None:
    """The ingest reads the next batch while a writer stores the one before (not yet marked embedded):
    `after` keeps that batch from being handed out twice."""
    registry = Registry(tmp_path / "r.sqlite3")
    doc_id = doc_id_for("a.pdf")
    chunks = [
        Chunk(
            chunk_id=f"c{i}",
            doc_id=doc_id,
            content_hash="h1",
            source="a.pdf",
            file_type="pdf",
            page=1,
            chunk_index=i,
            text=f"text {i}",
            char_start=0,
            char_end=6,
        )
        for i in range(5)
    ]
    registry.add_chunks_to_embed(doc_id, "h1", list(reversed(chunks)))
    first = registry.chunks_to_embed(doc_id, "h1", 2)
    assert [c.chunk_id for c in first] == ["c0", "c1"]
    following = registry.chunks_to_embed(doc_id, "h1", 2, after=first[-1].chunk_index)
    assert [c.chunk_id for c in following] == ["c2", "c3"]
    assert registry.mark_embedded(doc_id, "h1", ["c0", "c1"]) == 3
    assert [c.chunk_id for c in registry.chunks_to_embed(doc_id, "h1", 10)] == ["c2", "c3", "c4"]


def test_a_page_keeps_its_headings_and_an_older_pages_table_gets_the_column(tmp_path: Path) -> None:
    import sqlite3

    from core.schemas import Page, PageHeading

    db = tmp_path / "r.sqlite3"
    with sqlite3.connect(db) as conn:  # the pages table as an earlier release made it
        conn.execute(
            "CREATE TABLE pages (doc_id TEXT NOT NULL, content_hash TEXT NOT NULL, number INTEGER NOT NULL, "
            "text TEXT NOT NULL, ocr INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (doc_id, content_hash, number))"
        )
        conn.execute("INSERT INTO pages VALUES ('d', 'h0', 1, 'old page', 0)")
    registry = Registry(db)
    assert [p.headings for p in registry.pages("d", "h0")] == [[]]
    heading = PageHeading(title="1.2 Filters", size=13.0)
    registry.add_pages("d", "h1", [Page(number=1, text="1.2 Filters\nChange them.", headings=[heading])], [])
    assert registry.page("d", "h1", 1).headings == [heading]
