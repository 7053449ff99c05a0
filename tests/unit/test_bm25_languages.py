"""BM25 in several languages: each chunk is stemmed with its own language's stemmer, a query with its
language's and with each indexed language's, and an index written before languages were kept reads
as English."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.text import tokenize
from ingestion.bm25_index import MAX_SEGMENTS, BM25Index

FRENCH = {
    "f1": "Les journaux municipaux publient les avis de démolition.",
    "f2": "Le comité approuve la demande de démolition partielle du bâtiment.",
}
ENGLISH = {
    "e1": "The municipal journal publishes the demolition notices.",
    "e2": "The committee approves the partial demolition request.",
}


def build(directory: Path) -> BM25Index:
    index = BM25Index(directory)
    index.add(list(FRENCH), list(FRENCH.values()), ["fr-doc"] * 2, ["h1"] * 2, ["fr", "fr"])
    index.add(list(ENGLISH), list(ENGLISH.values()), ["en-doc"] * 2, ["h2"] * 2, ["en", "en"])
    return index


def test_french_text_is_stemmed_as_french_and_english_is_unchanged() -> None:
    assert tokenize("journaux municipaux", "fr") == tokenize("journal municipal", "fr") == ["journal", "municipal"]
    assert tokenize("journaux municipaux") != tokenize("journal municipal")  # English stems keep "aux" plurals
    assert tokenize("The limitations of the projects") == tokenize("The limitations of the projects", "en")
    assert tokenize("le projet", "fr") == ["le", "projet"]  # English stop words apply to English only


def test_a_french_query_finds_the_french_plural_by_its_singular(tmp_path: Path) -> None:
    index = build(tmp_path)
    found = [cid for cid, _ in index.search("journal municipal", 10, "fr")]
    assert {"f1", "e1"} <= set(found)  # "journal municipal" is English too
    # Without the French row stemming, "journaux" would not meet "journal".
    english_only = BM25Index(tmp_path / "en")
    english_only.add(["f1"], [FRENCH["f1"]], ["fr-doc"], ["h1"], ["en"])
    assert english_only.search("journal municipal", 10, "en") == []


def test_languages_survive_a_reload_and_a_merge(tmp_path: Path) -> None:
    build(tmp_path)
    reloaded = BM25Index(tmp_path)
    for n in range(10):  # more segments than MAX_SEGMENTS: the smallest are merged
        reloaded.add([f"x{n}"], ["Les nationaux votent."], [f"d{n}"], ["h"], ["fr"])
    assert reloaded.segment_count <= MAX_SEGMENTS
    again = BM25Index(tmp_path)
    # "nationaux" rows meet "national" only if they were stemmed as French and still count as French.
    assert {cid for cid, _ in again.search("national", 20)} == {f"x{n}" for n in range(10)}
    assert {cid for cid, _ in again.search("journal", 20)} == {"f1", "e1"}


def test_a_segment_written_before_languages_reads_as_english(tmp_path: Path) -> None:
    index = BM25Index(tmp_path)
    index.add(["e1"], [ENGLISH["e1"]], ["en-doc"], ["h2"])
    [segment_file] = tmp_path.glob("*.npz")
    with np.load(segment_file) as data:
        kept = {name: data[name] for name in data.files if name != "langs"}
    np.savez(segment_file, **kept)
    old = BM25Index(tmp_path)
    assert [cid for cid, _ in old.search("journals", 10)] == ["e1"]
