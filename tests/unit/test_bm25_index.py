"""The BM25 index on its own: ranking, persistence, incremental add/delete, merging, crash leftovers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingestion.bm25_index import MAX_SEGMENTS, BM25Index

DOCS = {
    "c1": "The harbor warehouse stores frozen seafood for export.",
    "c2": "Forklift operators need a two-day certification.",
    "c3": "Seafood exports grew in the northern region; seafood prices rose.",
    "c4": "The recycling initiative targets cardboard and pallet wrap.",
}


def build(directory: Path, docs: dict[str, str] = DOCS, doc_id: str = "d1", version: str = "h1") -> BM25Index:
    index = BM25Index(directory)
    index.add(list(docs), list(docs.values()), [doc_id] * len(docs), [version] * len(docs))
    return index


def same_scores(left: list[tuple[str, float]], right: list[tuple[str, float]]) -> bool:
    """Equal up to float rounding (sums over several segments add in another order)."""
    a, b = dict(left), dict(right)
    return a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=1e-5) for k in a)


def ids(results: list[tuple[str, float]]) -> list[str]:
    return [cid for cid, _ in results]


def test_ranks_by_term_frequency_and_rarity(tmp_path: Path) -> None:
    index = build(tmp_path)
    results = index.search("seafood exports", 10)
    assert ids(results)[:2] == ["c3", "c1"]  # c3 has seafood twice and "exports"
    assert all(score > 0 for _, score in results)
    assert index.search("forklift", 10)[0][0] == "c2"
    assert index.search("volcano", 10) == []


def test_survives_a_restart_with_identical_scores(tmp_path: Path) -> None:
    before = build(tmp_path).search("seafood certification", 10)
    reopened = BM25Index(tmp_path)
    assert len(reopened) == len(DOCS)
    assert reopened.search("seafood certification", 10) == before


def test_delete_and_keep_hash(tmp_path: Path) -> None:
    index = build(tmp_path)
    index.add(["n1"], ["Seafood pricing of the new version."], ["d1"], ["h2"])
    assert index.delete_document("d1", keep_hash="h2") == len(DOCS)
    assert ids(index.search("seafood", 10)) == ["n1"]
    assert ids(BM25Index(tmp_path).search("seafood", 10)) == ["n1"]
    assert index.delete_document("d1") == 1 and len(index) == 0
    assert index.search("seafood", 10) == []


def test_idf_follows_deletes(tmp_path: Path) -> None:
    """Scores come from live rows only: deleting documents changes IDF exactly as a rebuild would."""
    index = build(tmp_path)
    index.add(["x1", "x2"], ["seafood seafood", "seafood market"], ["d2", "d2"], ["h"] * 2)
    with_d2 = index.search("seafood exports", 10)  # the search statistics are kept until the next commit
    index.delete_document("d2")
    assert not same_scores(index.search("seafood exports", 10), with_d2)
    fresh = build(tmp_path / "fresh")
    assert same_scores(index.search("seafood exports", 10), fresh.search("seafood exports", 10))


def test_readding_a_chunk_id_replaces_its_row(tmp_path: Path) -> None:
    index = build(tmp_path)
    index.add(["c4"], ["Now about volcanoes."], ["d1"], ["h1"])
    assert len(index) == len(DOCS)
    assert index.search("cardboard", 10) == []
    assert ids(index.search("volcanoes", 10)) == ["c4"]


def test_many_small_adds_merge_into_few_segments_with_the_same_scores(tmp_path: Path) -> None:
    many = BM25Index(tmp_path / "many")
    texts = {f"c{i}": f"document {i} about topic{i % 7} and seafood {'exports ' * (i % 3)}" for i in range(40)}
    for cid, text in texts.items():
        many.add([cid], [text], [f"d{cid}"], ["h"])
    assert many.segment_count <= MAX_SEGMENTS
    once = build(tmp_path / "once", texts)
    for query in ("seafood exports", "topic3 document", "document 17"):
        assert same_scores(many.search(query, 100), once.search(query, 100))
    assert same_scores(BM25Index(tmp_path / "many").search("topic3", 40), many.search("topic3", 40))


def test_an_interrupted_write_is_ignored_on_load(tmp_path: Path) -> None:
    """A crash after new terms were appended (and a segment file written) but before the manifest
    switched: the index loads as it was at the last commit, and later writes stay consistent."""
    build(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    with (tmp_path / "vocab.txt").open("a") as handle:
        handle.write("ghostterm\nanotherghost\n")
    (tmp_path / "seg-orphan.npz").write_bytes(b"partial")
    index = BM25Index(tmp_path)
    assert len(index) == len(DOCS) and index.search("ghostterm", 5) == []
    index.add(["z1"], ["volcano ash report"], ["d9"], ["h"])
    assert not (tmp_path / "seg-orphan.npz").exists()
    reopened = BM25Index(tmp_path)
    assert ids(reopened.search("volcano", 5)) == ["z1"]
    assert ids(reopened.search("forklift", 5)) == ["c2"]
    assert json.loads((tmp_path / "manifest.json").read_text())["vocab_size"] > manifest["vocab_size"]


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_a_reader_writes_nothing_and_sees_the_writers_commits(tmp_path: Path) -> None:
    writer = build(tmp_path)
    with (tmp_path / "vocab.txt").open("a", encoding="utf-8") as vocab:
        vocab.write("uncommitted\nterms\n")  # what a write killed before its commit leaves
    before = _snapshot(tmp_path)
    reader = BM25Index(tmp_path)
    assert _snapshot(tmp_path) == before, "opening for reading changed a file"
    assert ids(reader.search("seafood", 10)) == ["c3", "c1"] and not reader.reload_if_changed()

    writer.add(["c9"], ["Lobster traps are checked at dawn."], ["d2"], ["h2"])
    assert ids(reader.search("lobster", 10)) == [], "a reader keeps its snapshot until it reloads"
    assert reader.reload_if_changed()
    assert ids(reader.search("lobster traps", 10)) == ["c9"] and ids(reader.search("seafood", 10)) == ["c3", "c1"]
    assert "uncommitted" not in (tmp_path / "vocab.txt").read_text(encoding="utf-8"), "the writer cut the dead tail"


def test_a_writer_that_reloads_first_keeps_the_other_writers_segments(tmp_path: Path) -> None:
    first, second = build(tmp_path), BM25Index(tmp_path)
    first.add(["c8"], ["Crane inspections happen monthly."], ["d3"], ["h3"])
    assert second.reload_if_changed()  # what a writer does once it holds the write lock
    second.add(["c9"], ["Lobster traps are checked at dawn."], ["d2"], ["h2"])
    fresh = BM25Index(tmp_path)
    assert ids(fresh.search("crane", 10)) == ["c8"] and ids(fresh.search("lobster", 10)) == ["c9"]
    assert len(fresh) == len(DOCS) + 2


def test_a_reader_keeps_its_mapped_segments_after_a_writer_removed_their_files(tmp_path: Path) -> None:
    """Segments are memory-mapped, not read: a commit that unlinks a file a reader mapped leaves the
    reader's snapshot answering as before, until it reloads."""
    writer = build(tmp_path)
    reader = BM25Index(tmp_path)
    before = reader.search("seafood exports", 10)
    segment_files = {p.name for p in tmp_path.glob("*.npz")}
    writer.delete_document("d1")
    writer.add(["n1"], ["Seafood exports of the new owner."], ["d2"], ["h2"])
    assert not segment_files & {p.name for p in tmp_path.glob("*.npz")}, "the emptied segment's file is gone"
    assert reader.search("seafood exports", 10) == before
    assert reader.reload_if_changed() and ids(reader.search("seafood exports", 10)) == ["n1"]
