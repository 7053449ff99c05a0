"""The request router on the real MiniLM embedder: its committed weights separate the frozen dev
set's document-level requests from passage questions, and the requested form is read from the text."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.linear_probe import fit
from core.schemas import Retrieval
from core.settings import get_settings
from providers.embedder import Embedder
from rag.document_stages import RouteRequest
from rag.router import SCOPE_WEIGHTS_PATH, WEIGHTS_PATH, Form, Route, Router, RouterWeights, requested_form
from scripts.train_router import DATASET, DATASETS, folds, load
from tests.chunks import text_hit


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(get_settings())


def test_the_committed_weights_match_the_embedder_and_report_cross_validated_figures(embedder: Embedder) -> None:
    weights = RouterWeights.load()
    assert weights.weights.shape == (384,) and weights.embedder == embedder.label
    report = json.loads(WEIGHTS_PATH.read_text())["report"]
    assert report["requests"] == sum(len(load(path)) for path in DATASETS)
    assert report["document_precision"] >= 0.8 and report["document_recall"] >= 0.8


def test_held_out_requests_are_routed_by_meaning(embedder: Embedder) -> None:
    """Trained on four fifths of the set, scored on the fifth it never saw."""
    rows = load(DATASET)
    vectors = np.asarray(embedder.embed([r["text"] for r in rows]), dtype=np.float32)
    truth = np.array([r["label"] == "document" for r in rows])
    held_out = folds(truth, 5, 1) == 0
    w, b = fit(vectors[~held_out], truth[~held_out], 1e-3)
    predicted = RouterWeights(w, b, embedder.label).probability(vectors[held_out]) >= 0.5
    assert np.mean(predicted == truth[held_out]) >= 0.75


def test_the_router_says_document_for_overviews_and_passage_for_one_fact(embedder: Embedder) -> None:
    router = Router(embedder.embed, get_settings().route_threshold)
    overview = router.route("What is this document about?")
    fact = router.route("When was the company founded and who are the co-founders?")
    assert overview.kind == "document" and fact.kind == "passage"
    assert overview.p_document > fact.p_document


def test_the_scope_weights_say_every_document_for_each_or_all_and_one_for_this_or_a_search(
    embedder: Embedder,
) -> None:
    """Phrasings in neither training set: reading every document, against one document or a search."""
    report = json.loads(SCOPE_WEIGHTS_PATH.read_text())["report"]
    assert report["every_precision"] >= 0.8
    router = Router(embedder.embed, get_settings().route_threshold)
    threshold = get_settings().scope_every_threshold
    for every in ("Give me a one-line summary of each of my files.", "Summarise all of my documents together."):
        assert router.route(every).p_every >= threshold, every
    for one in ("Which file mentions the fire drill?", "Summarize this document in 3 bullets."):
        assert router.route(one).p_every < threshold, one


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("Summarize the main contribution in 3 bullets.", Form(bullets=3)),
        ("Give me five key points", Form(bullets=5)),
        ("Summarise it in one sentence", Form(sentences=1)),
        ("A 50-word summary please", Form(words=50)),
        ("List the main findings as bullet points", Form(bullets=0)),
        ("What is this document about?", Form()),
        ("give me the five most important points of this lease", Form(bullets=5)),
        ("What is in 3 of the points?", Form()),
        ("Résume le rapport en trois points.", Form(bullets=3)),
        ("les chiffres clés en 4 puces", Form(bullets=4)),
        ("Fasse es in fünf Stichpunkten zusammen", Form(bullets=5)),
        ("Resúmelo en dos frases", Form(sentences=2)),
        ("Liste toutes les dates", Form(bullets=0)),
    ],
)
def test_the_requested_form_is_read_from_the_text(text: str, form: Form) -> None:
    assert requested_form(text) == form


def _retrieval(dense: float) -> Retrieval:
    hit = text_hit("Some text.", source="a.pdf", page=1, dense=dense)
    return Retrieval(query="q", hits=[hit], candidates=[hit], bm25_weight=0.5, fusion="convex", reranker="none")


def test_a_leaning_request_goes_to_the_documents_only_when_no_passage_passes_the_gate(embedder: Embedder) -> None:
    settings = get_settings()
    stage = RouteRequest(embedder.embed, settings)
    leaning = Route(kind="document", p_document=settings.route_sure_threshold - 0.1, form=Form())
    sure = Route(kind="document", p_document=settings.route_sure_threshold, form=Form())
    passage = Route(kind="passage", p_document=0.1, form=Form())
    assert stage.sure(sure) and not stage.sure(leaning) and not stage.sure(passage)
    weak, strong = _retrieval(settings.refusal_threshold - 0.01), _retrieval(settings.refusal_threshold)
    assert stage.unmatched(leaning, weak) and not stage.unmatched(leaning, strong)
    assert not stage.unmatched(passage, weak)


def test_a_leaning_request_reads_the_documents_the_user_chose(embedder: Embedder) -> None:
    """With a file picked, "what's this table about?" has a referent: P(document) from route_chosen_threshold reads
    it; without one, only from route_whole_threshold."""
    settings = get_settings()
    stage = RouteRequest(embedder.embed, settings)
    between = (settings.route_chosen_threshold + settings.route_whole_threshold) / 2
    leaning = Route(kind="document", p_document=between, form=Form())
    assert stage.leans(leaning, chosen=True) and not stage.leans(leaning)
    passage = Route(kind="passage", p_document=settings.route_chosen_threshold - 0.01, form=Form())
    assert not stage.leans(passage, chosen=True)


@pytest.mark.parametrize(
    ("text", "shape_only"),
    [
        ("3 bullets", True),
        ("five bullet points please", True),
        ("Give me 2 sentences.", True),
        ("en trois points stp", True),
        ("in drei Sätzen bitte", True),
        ("Dámelo en dos frases", True),
        ("as a bulleted list", True),
        ("List the planets in 3 bullets", False),
        ("3 bullets on the causes of inflation", False),
        ("What are the 3 points of the triangle?", False),
        ("What is this document about?", False),
    ],
)
def test_a_request_for_a_shape_with_no_subject_is_a_document_request(
    embedder: Embedder, text: str, shape_only: bool
) -> None:
    """Nothing in "3 bullets" could be answered from general knowledge: it is about the documents at
    hand, and goes there whatever the router's vector says (it has no topic to read)."""
    route = Router(embedder.embed, get_settings().route_threshold).route(text)
    assert route.shape_only is shape_only
    if shape_only:
        assert route.kind == "document"
        assert RouteRequest(embedder.embed, get_settings()).sure(route)


def test_requests_not_about_the_documents_stay_on_the_passage_path(embedder: Embedder) -> None:
    """General requests in words none of the routing sets use: retrieval then refuses them when the
    documents do not hold the answer, instead of reading a document or asking which one."""
    router = Router(embedder.embed, get_settings().route_threshold)
    for text in (
        "Describe how a refrigerator keeps food cold.",
        "Recommend a board game for four players.",
        "Compose a limerick about a cat.",
        "What did we talk about last time?",
    ):
        assert router.route(text).kind == "passage", text
