"""A question is also searched in the languages of the documents in scope it is not written in: always
when none of them is in its language, else only when its search found nothing close; into at most the
set number of languages, those whose passages ranked highest; the model's reply cleaned, or dropped
when it is not a translation."""

from __future__ import annotations

from core.schemas import Retrieval
from core.settings import get_settings
from rag.query_translation import clean_translation
from rag.stages import TranslateQuery
from tests.chunks import text_hit


def _retrieval(*hits: tuple[str, float]) -> Retrieval:
    candidates = [text_hit(f"passage {n}", dense=dense, lang=lang) for n, (lang, dense) in enumerate(hits)]
    return Retrieval(
        query="q", hits=candidates[:4], candidates=candidates, bm25_weight=0.5, fusion="convex", reranker="none"
    )


def _stage(held: dict[str, int], **settings: object) -> TranslateQuery:
    def unused() -> None:
        raise AssertionError("no model call when only the targets are asked for")

    return TranslateQuery(unused, None, lambda doc_ids: held, get_settings(**settings))  # type: ignore[arg-type]


def test_documents_all_in_other_languages_always_get_a_translation() -> None:
    assert _stage({"fr": 30}).targets("en", _retrieval(("fr", 0.9)), None) == ["fr"]
    assert _stage({"en": 30}).targets("en", _retrieval(("en", 0.1)), None) == []


def test_with_documents_in_the_questions_language_only_a_weak_search_is_translated() -> None:
    below = get_settings().translate_below_dense
    held = {"en": 300, "fr": 20}
    assert _stage(held).targets("en", _retrieval(("en", below), ("fr", 0.2)), None) == []
    assert _stage(held).targets("en", _retrieval(("en", below - 0.01), ("fr", 0.2)), None) == ["fr"]


def test_the_languages_whose_passages_ranked_highest_come_first_up_to_the_limit() -> None:
    held = {"en": 300, "fr": 20, "de": 50, "es": 5, "pt": 5}
    weak = _retrieval(("en", 0.3), ("es", 0.2), ("en", 0.2), ("fr", 0.1))
    assert _stage(held).targets("en", weak, None) == ["es", "fr"]
    # Languages with no passage among the candidates come after, the most held first.
    assert _stage(held, translation_languages=4).targets("en", weak, None) == ["es", "fr", "de", "pt"]
    assert _stage(held, translate_questions=False).targets("en", weak, None) == []


def test_the_reply_is_cleaned_or_dropped_when_it_is_no_translation() -> None:
    question = "At what time was the meeting closed?"
    assert clean_translation('"À quelle heure la séance a-t-elle été levée ?"\n', question) == (
        "À quelle heure la séance a-t-elle été levée ?"
    )
    assert clean_translation("Traduction : À quelle heure ?", question) == "À quelle heure ?"
    assert clean_translation("  \n", question) is None
    assert clean_translation(question, question) is None
    assert clean_translation("La séance a été levée à 16h05. " * 10, question) is None
