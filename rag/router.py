"""Route by meaning: does a request need the whole document (overview, summary, outline, key points,
every number, a whole section, a comparison, which document mentions …) or one passage?

A question about a document as a whole resembles no chunk of it, so the relevance gate would refuse
it before the model is asked. The decision is a logistic regression on the request's MiniLM vector
(the embedder that indexes the chunks), trained on the frozen labelled sets
eval/datasets/routing/requests*.jsonl by scripts/train_router.py, which writes `router_weights.json`
beside this module and reports precision and recall under cross-validation. No phrase list: the hard
negatives of that set ("who wrote the executive summary?", "which key do I press to quit?") mention
the same words as document requests and are told apart by what the answer has to cover.

The requested form (how many bullets, sentences or words) is read from the text: that is a number the
user wrote, not a judgement.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from core.linear_probe import probability
from rag.evidence import Embed
from rag.extraction import ListKind
from rag.list_requests import list_kind
from rag.subjectless import names_no_subject

WEIGHTS_PATH = Path(__file__).with_name("router_weights.json")
SCOPE_WEIGHTS_PATH = Path(__file__).with_name("scope_weights.json")
OVERVIEW_WEIGHTS_PATH = Path(__file__).with_name("overview_weights.json")

RouteKind = Literal["document", "passage"]

# Counts and units as a request writes them, in the languages the app answers in (a number the user
# wrote, read, not judged): "3 bullets", "five most important points", "trois points", "4 puces",
# "fünf Stichpunkte", "tres viñetas".
_NUMBER_WORDS = {
    "a single": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "une seule": 1,
    "une": 1,
    "deux": 2,
    "trois": 3,
    "quatre": 4,
    "cinq": 5,
    "sept": 7,
    "huit": 8,
    "neuf": 9,
    "dix": 10,
    "einen": 1,
    "einem": 1,
    "zwei": 2,
    "drei": 3,
    "vier": 4,
    "fünf": 5,
    "sechs": 6,
    "sieben": 7,
    "acht": 8,
    "zehn": 10,
    "una": 1,
    "dos": 2,
    "tres": 3,
    "cuatro": 4,
    "cinco": 5,
    "seis": 6,
    "siete": 7,
    "ocho": 8,
    "diez": 10,
}
_UNITS = {
    "bullet": "bullet",
    "point": "bullet",
    "line": "bullet",
    "puce": "bullet",
    "ligne": "bullet",
    "stichpunkt": "bullet",
    "punkt": "bullet",
    "zeile": "bullet",
    "viñeta": "bullet",
    "punto": "bullet",
    "línea": "bullet",
    "word": "word",
    "mot": "word",
    "wort": "word",
    "wörter": "word",
    "palabra": "word",
    "sentence": "sentence",
    "phrase": "sentence",
    "satz": "sentence",
    "sätze": "sentence",
    "frase": "sentence",
    "oración": "sentence",
    "oracione": "sentence",
    "paragraph": "paragraph",
    "paragraphe": "paragraph",
    "absatz": "paragraph",
    "párrafo": "paragraph",
}
_COUNT = r"(\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
# Up to two words between the count and the unit ("five most important points"), never "of" ("3 of the points").
_BETWEEN = r"(?:(?!of\b|de\b|der\b)[^\W\d_]+\s+){0,2}"
_UNIT = "(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + ")"
_FORM = re.compile(r"\b" + _COUNT + r"[\s-]+" + _BETWEEN + _UNIT + r"(?:s|es|en|n|e)?\b", re.I)
_BULLETS = re.compile(r"\b(bullet points?|bullet(?:s|ed)?|list|liste|lista|puces|stichpunkte|viñetas)\b", re.I)


# The words a request for a shape is wrapped in, in the app's languages: pronouns, articles,
# prepositions, politeness and the verbs of asking (closed word classes, no topic words).
_WRAPPING = frozenset(
    """please pls plz thanks give gimme make write do put turn can could would will you me us i it this
    that just only in into as a an the at most max maximum no more than of with for want need like
    to short brief quick now s'il te vous plait plaît stp svp donne donnez moi fais faites mets en
    un une des le la les l au plus juste seulement peux pouvez tu merci ça bitte gib geben sie mir
    mach machen als ein eine einen einem höchstens maximal nur kannst du können das es por favor
    dame dime dámelo dímelo hazlo haz pon como una unos unas lo máximo solo puedes esto""".split()
)
_WORD = re.compile(r"[^\W\d_]+")


def asks_only_a_shape(text: str) -> bool:
    """'3 bullets', 'give me five points please', 'en deux phrases': a request for a shape with nothing
    to fill it with. No general-knowledge answer could address it, so it is about the documents at
    hand; the router's vector, which has no topic to read, cannot tell that apart from chit-chat."""
    rest = _BULLETS.sub(" ", _FORM.sub(" ", text))
    if rest == text:
        return False
    return all(word in _WRAPPING for word in _WORD.findall(rest.lower()))


@dataclass(frozen=True)
class Form:
    """The shape the user asked for: `bullets` items, or at most `sentences` sentences or `words` words."""

    bullets: int | None = None
    sentences: int | None = None
    words: int | None = None


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    p_document: float
    form: Form
    p_every: float = 0.0  # P(the request needs every document read), for a document request
    p_overview: float = 0.0  # P(it asks for a general overview of the document: its card answers it)
    shape_only: bool = False  # asks for a shape and names no subject (asks_only_a_shape): a document request
    list_kind: ListKind | None = None  # asks for every date, figure or name (rag/list_requests.py): extracted
    subjectless: bool = False  # names nothing but the document ("what is this?", rag/subjectless.py)


def requested_form(text: str) -> Form:
    """'3 bullets', 'five key points', 'one sentence', '50 words', 'a bulleted list'."""
    match = _FORM.search(text)
    if match:
        count = match.group(1).lower()
        n = int(count) if count.isdigit() else _NUMBER_WORDS[count]
        unit = _UNITS[match.group(2).lower()]
        if unit == "bullet":
            return Form(bullets=n)
        if unit == "word":
            return Form(words=n)
        if unit == "sentence":
            return Form(sentences=n)
        return Form(sentences=4 * n)  # paragraphs: a few sentences each
    if _BULLETS.search(text):
        return Form(bullets=0)  # bullets, as many as the content needs
    return Form()


@dataclass(frozen=True)
class RouterWeights:
    """A logistic regression over L2-normalised sentence vectors."""

    weights: np.ndarray
    bias: float
    embedder: str

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> RouterWeights:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(np.asarray(data["weights"], dtype=np.float32), float(data["bias"]), data["embedder"])

    def save(self, path: Path, report: dict[str, object]) -> None:
        data = {
            "embedder": self.embedder,
            "bias": round(self.bias, 6),
            "weights": [round(float(w), 6) for w in self.weights],
            "report": report,
        }
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def probability(self, vectors: np.ndarray) -> np.ndarray:
        return probability(vectors, self.weights, self.bias)


class Router:
    """Document-level or passage, from the request's meaning; `threshold` on P(document). On the same
    vector, a second regression (scripts/train_scope.py) says whether a document request needs every
    document read ("summarise each of my files", "compare the two contracts") or is about one of them
    or a search for the one that holds something ("which file mentions GDPR?"); a third
    (scripts/train_overview.py), whether it asks for a general overview, which a document's card answers."""

    def __init__(
        self,
        embed: Embed,
        threshold: float,
        weights: RouterWeights | None = None,
        scope_weights: RouterWeights | None = None,
        overview_weights: RouterWeights | None = None,
    ) -> None:
        self._embed = embed
        self._threshold = threshold
        self._weights = weights or RouterWeights.load()
        self._scope = scope_weights or RouterWeights.load(SCOPE_WEIGHTS_PATH)
        self._overview = overview_weights or RouterWeights.load(OVERVIEW_WEIGHTS_PATH)

    def route(self, text: str) -> Route:
        vector = np.asarray(self._embed([text]), dtype=np.float32)
        p = float(self._weights.probability(vector)[0])
        shape_only = asks_only_a_shape(text)
        return Route(
            kind="document" if p >= self._threshold or shape_only else "passage",
            p_document=p,
            form=requested_form(text),
            p_every=float(self._scope.probability(vector)[0]),
            p_overview=float(self._overview.probability(vector)[0]),
            shape_only=shape_only,
            list_kind=list_kind(text),
            subjectless=names_no_subject(text),
        )
