"""A request that names nothing but the document ("what is this?") is a request for its overview, unless
an earlier turn of the conversation is what it points at; one that names a part, points at nothing or
asks nothing is left to the router."""

from __future__ import annotations

import pytest

from core.settings import get_settings
from providers.embedder import Embedder
from rag.document_stages import RouteRequest
from rag.subjectless import names_no_subject


@pytest.mark.parametrize(
    "text",
    [
        "what is this?",
        "Tell me about it",
        "what's this document all about",
        "c'est quoi ce fichier ?",
        "Worum geht es hier?",
        "¿de qué trata esto?",
        "o que é isto?",
        "explain this to me please",
    ],
)
def test_a_request_that_names_nothing_but_the_document(text: str) -> None:
    assert names_no_subject(text)


@pytest.mark.parametrize(
    "text",
    [
        "what is this clause?",
        "what does it say about the deposit?",
        "what can you do?",
        "that's all",
        "what is it like in Lisbon?",
        "is it raining?",
        "what's up",
        "",
    ],
)
def test_a_request_that_names_a_part_points_at_nothing_or_asks_nothing(text: str) -> None:
    assert not names_no_subject(text)


def test_it_goes_to_the_documents_overview_unless_it_follows_up_an_earlier_turn() -> None:
    embedder = Embedder(get_settings())
    stage = RouteRequest(embedder.embed, get_settings())
    first = stage.run("what is this?", {})
    assert first.subjectless and first.kind == "document" and first.p_overview == 1.0 and stage.sure(first)
    follow_up = stage.run("what is this?", {}, follows_up=lambda: True)
    assert not follow_up.subjectless and not stage.sure(follow_up)
