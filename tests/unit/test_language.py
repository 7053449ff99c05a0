"""core/language.py on the real py3langid model: the frozen short-question set, the fallback for a
text without signal, and the settings that restrict it."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.language import LanguageDetector, language_name, stemmer_algorithm
from core.settings import get_settings

DATASET = Path(__file__).resolve().parents[2] / "eval" / "datasets" / "language" / "questions.jsonl"


def test_short_questions_of_the_dev_set_are_detected() -> None:
    rows = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    detector = LanguageDetector.from_settings(get_settings())
    wrong = [(row["text"], detector(row["text"])) for row in rows if detector(row["text"]) != row["lang"]]
    assert len(rows) >= 80
    # 84/84 when measured (bench/language_detection.py); allow one miss so a new py3langid build
    # does not fail the suite for a single borderline question.
    assert len(wrong) <= 1, wrong


def test_a_text_without_signal_gets_the_default() -> None:
    detector = LanguageDetector(default="fr")
    assert detector("43") == "fr"
    assert detector("   ") == "fr"
    assert detector.detect("Combien de logements le projet ajoute-t-il ?").lang == "fr"


def test_candidates_are_restricted() -> None:
    detector = LanguageDetector(("en", "de"))
    assert detector("Quel est le coût estimé des travaux de rénovation ?") in {"en", "de"}
    with pytest.raises(ValueError, match="xx"):
        LanguageDetector(("en", "xx"))


def test_names_and_stemmers() -> None:
    assert language_name("fr") == "French"
    assert stemmer_algorithm("de") == "german"
    assert stemmer_algorithm("zh") is None


def test_a_preloaded_model_serves_several_threads_at_once() -> None:
    """preload() loads the model in the background; detections that start before it is ready wait for it."""
    detector = LanguageDetector(("en", "fr", "it"))  # a language set no other test has loaded
    detector.preload()
    texts = ["Où se trouve la gare la plus proche ?", "Where is the nearest station?"] * 4
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(detector, texts)) == ["fr", "en"] * 4
