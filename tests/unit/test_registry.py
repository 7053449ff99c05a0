from __future__ import annotations

from pathlib import Path

from ingestion.registry import Registry, now
from ragchat.schemas import DocumentRecord, doc_id_for


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
