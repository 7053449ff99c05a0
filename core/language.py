"""Which language a text is written in: py3langid (langid.py's naive Bayes over byte n-grams, its
model shipped in the wheel, about 0.03 ms a question) restricted to the languages we handle.

Restricting the candidate set is what makes short questions reliable: on the frozen set of 84 short
questions (eval/datasets/language, `python -m bench.language_detection`) py3langid over all its 97
languages got 83 right ("Resume el documento." came out as another language), restricted to the list
below 84 of 84. lingua-language-detector (96 MB installed) got 81 and langid.py 82.

A text with too little signal ("OK?", "43", a table of figures) has a low normalised probability; it
gets the configured default instead of a guess.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

# ISO 639-1 code → (English name for the prompt, PyStemmer algorithm or None when Snowball has none).
LANGUAGES: dict[str, tuple[str, str | None]] = {
    "ar": ("Arabic", "arabic"),
    "ca": ("Catalan", "catalan"),
    "cs": ("Czech", "czech"),
    "da": ("Danish", "danish"),
    "de": ("German", "german"),
    "el": ("Greek", "greek"),
    "en": ("English", "english"),
    "es": ("Spanish", "spanish"),
    "eu": ("Basque", "basque"),
    "fi": ("Finnish", "finnish"),
    "fr": ("French", "french"),
    "ga": ("Irish", "irish"),
    "hi": ("Hindi", "hindi"),
    "hu": ("Hungarian", "hungarian"),
    "id": ("Indonesian", "indonesian"),
    "it": ("Italian", "italian"),
    "ja": ("Japanese", None),
    "ko": ("Korean", None),
    "lt": ("Lithuanian", "lithuanian"),
    "ne": ("Nepali", "nepali"),
    "nl": ("Dutch", "dutch"),
    "no": ("Norwegian", "norwegian"),
    "pl": ("Polish", "polish"),
    "pt": ("Portuguese", "portuguese"),
    "ro": ("Romanian", "romanian"),
    "ru": ("Russian", "russian"),
    "sr": ("Serbian", "serbian"),
    "sv": ("Swedish", "swedish"),
    "ta": ("Tamil", "tamil"),
    "tr": ("Turkish", "turkish"),
    "uk": ("Ukrainian", None),
    "zh": ("Chinese", None),
}

DEFAULT_LANGUAGE = "en"


def language_name(code: str) -> str:
    """The English name the prompt uses ("French"); an unknown code is returned as it is."""
    return LANGUAGES.get(code, (code, None))[0]


def stemmer_algorithm(code: str) -> str | None:
    """PyStemmer's algorithm for this language, or None (no stemming) when Snowball has none."""
    return LANGUAGES.get(code, (code, None))[1]


@dataclass(frozen=True)
class Detected:
    lang: str
    confidence: float


_identifiers: dict[tuple[str, ...], Future[Any]] = {}
_identifiers_lock = threading.Lock()


def _identifier_loading(languages: tuple[str, ...]) -> Future[Any]:
    """py3langid's identifier restricted to `languages`, loaded once per process in a daemon thread.
    Loading takes 0.3-0.6 s, most of it decompressing the xz model, which releases the GIL: started
    early (`LanguageDetector.preload`), it overlaps with a first search opening Chroma."""
    with _identifiers_lock:
        future = _identifiers.get(languages)
        if future is None:
            future = _identifiers[languages] = Future()
            threading.Thread(target=_load_identifier, args=(languages, future), name="langid-load", daemon=True).start()
    return future


def _load_identifier(languages: tuple[str, ...], future: Future[Any]) -> None:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        identifier.set_languages(list(languages))
        future.set_result(identifier)
    except BaseException as exc:  # handed to whoever waits for it
        future.set_exception(exc)


def _identifier(languages: tuple[str, ...]) -> Any:
    return _identifier_loading(languages).result()


DETECT_CHARS = 600


class LanguageDetector:
    """Detects among `languages`; below `min_confidence` (the normalised probability) the text gets
    `default`."""

    def __init__(
        self,
        languages: tuple[str, ...] = tuple(LANGUAGES),
        min_confidence: float = 0.4,
        default: str = DEFAULT_LANGUAGE,
    ) -> None:
        unknown = sorted(set(languages) - set(LANGUAGES))
        if unknown:
            raise ValueError(f"unsupported language code(s): {', '.join(unknown)}")
        self.languages = tuple(sorted(set(languages) | {default}))
        self.min_confidence = min_confidence
        self.default = default

    @classmethod
    def from_settings(cls, settings: Any) -> LanguageDetector:
        """From core.settings.LanguageSettings' fields (any object that has them)."""
        return cls(tuple(settings.languages), settings.language_min_confidence, settings.default_language)

    def preload(self) -> None:
        """Start loading the model in the background (a first `detect` waits for it)."""
        _identifier_loading(self.languages)

    def detect(self, text: str) -> Detected:
        """On the text's first DETECT_CHARS characters: plenty to tell a language, and the cost grows
        with the length (a 2,000-page manual's pages and chunks are detected while it becomes searchable)."""
        if not text.strip():
            return Detected(self.default, 0.0)
        lang, confidence = _identifier(self.languages).classify(text[:DETECT_CHARS])
        if confidence < self.min_confidence:
            return Detected(self.default, float(confidence))
        return Detected(str(lang), float(confidence))

    def __call__(self, text: str, fallback: str | Callable[[], str] | None = None) -> str:
        """The text's language; when unsure, `fallback` (e.g. its page's language; a callable is only
        called then), else the default."""
        found = self.detect(text)
        if fallback is not None and found.confidence < self.min_confidence:
            return fallback() if callable(fallback) else fallback
        return found.lang
