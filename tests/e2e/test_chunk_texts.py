"""Chroma holds vectors and the two ids it filters on; a chunk's text and metadata live in the
registry. Chunks an earlier release stored with their text in Chroma are still read from there. Real
Chroma, real embedder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.settings import get_settings
from ragchat.application import open_session
from ragchat.session import Session
from tests.fixtures import long_pdf_bytes

NOTE = "The heron colony on the north island grew to forty nests. Wardens counted them in April."


def embedded_rows(session: Session) -> int:
    with sqlite3.connect(session.document_index.registry._path) as conn:
        return conn.execute("SELECT COUNT(*) FROM embedded_chunks").fetchone()[0]


def test_chroma_keeps_no_text_and_search_reads_it_from_the_registry(home: Path) -> None:
    session = open_session(get_settings())
    result = session.ingest_bytes("book.pdf", long_pdf_bytes(3, marker="kestrel"))
    assert result.status == "indexed"
    stored = session.document_index.store._collection.get(include=["documents", "metadatas"])
    assert len(stored["ids"]) == result.chunks == embedded_rows(session)
    assert set(stored["documents"]) == {None}
    assert all(set(meta) == {"doc_id", "content_hash"} for meta in stored["metadatas"])

    for weight in (0.0, 1.0):  # dense only, keyword only (its hits' vectors come from Chroma)
        hits = session.search("kestrel", k=3, bm25_weight=weight).hits
        assert hits and all("kestrel" in h.chunk.text for h in hits)
        assert all(h.chunk.source == "book.pdf" and h.chunk.page is not None for h in hits)
        assert all(h.scores.dense is not None for h in hits)

    assert session.delete("book.pdf")
    assert embedded_rows(session) == 0
    assert session.document_index.store.count() == 0


def test_chunks_an_earlier_release_stored_in_chroma_are_still_read(home: Path) -> None:
    session = open_session(get_settings())
    assert session.ingest_bytes("herons.txt", NOTE.encode()).status == "indexed"
    collection = session.document_index.store._collection
    ids = collection.get(include=[])["ids"]
    chunks = session.document_index.registry.chunks(ids)
    # What an earlier release wrote: the text as the document, every field as metadata, nothing in the registry.
    collection.upsert(
        ids=ids,
        embeddings=collection.get(ids=ids, include=["embeddings"])["embeddings"],
        documents=[chunks[cid].text for cid in ids],
        metadatas=[
            {
                "doc_id": chunks[cid].doc_id,
                "content_hash": chunks[cid].content_hash,
                "source": chunks[cid].source,
                "file_type": chunks[cid].file_type,
                "page": chunks[cid].page,
                "chunk_index": chunks[cid].chunk_index,
                "char_start": chunks[cid].char_start,
                "char_end": chunks[cid].char_end,
                "heading_path": "\x1f".join(chunks[cid].heading_path),
                "kind": chunks[cid].kind,
                "lang": chunks[cid].lang,
                "line_start": chunks[cid].line_start,
                "line_end": chunks[cid].line_end,
            }
            for cid in ids
        ],
    )
    with sqlite3.connect(session.document_index.registry._path) as conn:
        conn.execute("DELETE FROM embedded_chunks")
    assert session.document_index.registry.chunks(ids) == {}

    reopened = open_session(get_settings())
    for weight in (0.0, 1.0):
        hits = reopened.search("heron colony", k=3, bm25_weight=weight).hits
        assert [h.chunk for h in hits] == [chunks[cid] for cid in ids]
    assert reopened.document_index.maintenance.rebuild_keyword_index() == len(ids)
    assert reopened.search("wardens", k=3, bm25_weight=1.0).hits[0].chunk.text == chunks[ids[0]].text
