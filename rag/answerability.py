"""Answer or abstain, decided from what the model read in the evidence.

The abstention score is the probability that the documents do not state the answer. Its signals come
with the reply's hidden phrase line (rag/answer_format.py) and the evidence, at no extra model call:

- `p_none`: the model's probability of NONE where the phrase starts (SQuAD 2.0's unanswerable
  questions reuse the evidence's words, so the model must decide "is this stated?" before it copies);
- `phrase_mean_logprob`, `phrase_min_logprob`: how sure the model was of the words it copied;
- `phrase_missing`: the share of the phrase's words no evidence holds (a phrase from elsewhere);
- `question_missing`: the share of the question's terms no evidence holds (a name or number the
  question changed);
- `best_dense`: how close the best retrieved passage is to the question.

After the answer is written, one more signal can join them: `check_none`, the model's P(NONE) when it is
asked only whether the evidence states the answer (rag/prompting.py CHECK_SYSTEM_PROMPT, one token). The
answer prompt's own P(NONE) hardly separates the questions of some articles; asked alone, the model does
better. A model whose calibration has a `checked` part is scored again with it (`recheck`).

A logistic model per packaged LLM combines them; bench/answerability_signals.py fits it on some SQuAD
2.0 articles, reports it on others, and writes its weights and each strictness level's threshold to
rag/abstention_calibration.json. A model nobody calibrated (Ollama, an OpenAI-compatible server)
is scored by P(NONE) and the phrase check alone, with documented default thresholds, and the answer
says it is uncalibrated.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from core.schemas import Hit
from core.text import tokenize
from rag.answer_format import Reply
from rag.citations import content_words

Strictness = Literal["lenient", "balanced", "strict"]
SIGNALS = ("p_none", "phrase_mean_logprob", "phrase_min_logprob", "phrase_missing", "question_missing", "best_dense")
CHECK_SIGNAL = "check_none"
CALIBRATION_FILE = Path(__file__).with_name("abstention_calibration.json")

# Uncalibrated models: score = P(NONE) + UNCOPIED_PHRASE_WEIGHT · phrase_missing, refused at or above
# these thresholds (a phrase none of whose words are in the evidence adds 0.15).
UNCOPIED_PHRASE_WEIGHT = 0.15
DEFAULT_THRESHOLDS: dict[Strictness, float] = {"lenient": 0.6, "balanced": 0.3, "strict": 0.15}
# What each level may cost in answerable questions refused, when its threshold is calibrated: the
# highest share of the calibration articles' answerable questions it may refuse.
FALSE_REFUSAL_BUDGETS: dict[Strictness, float] = {"lenient": 0.05, "balanced": 0.12, "strict": 0.25}


@dataclass(frozen=True)
class LevelRates:
    """What a strictness level gave on the held-out calibration questions."""

    refusal: float  # share of unanswerable questions refused
    false_refusal: float  # share of answerable questions refused


@dataclass(frozen=True)
class Calibration:
    """A logistic model over SIGNALS: score = sigmoid(bias + Σ weight · (signal − mean) / scale)."""

    model: str
    weights: dict[str, float]
    means: dict[str, float]
    scales: dict[str, float]
    bias: float
    thresholds: dict[Strictness, float]
    rates: dict[Strictness, LevelRates]
    checked: Calibration | None = None  # the model over SIGNALS and CHECK_SIGNAL, after the check

    def score(self, signals: dict[str, float]) -> float:
        """A signal that is absent (not meaningful for this question) counts as its mean."""
        z = self.bias + sum(
            w * (signals.get(name, self.means[name]) - self.means[name]) / (self.scales[name] or 1.0)
            for name, w in self.weights.items()
        )
        return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


@lru_cache(maxsize=1)
def calibrations() -> dict[str, Calibration]:
    """The calibrated packaged models, by the name in their label (e.g. "qwen2.5-coder-1.5b")."""
    if not CALIBRATION_FILE.exists():
        return {}
    data = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    return {name: _calibration(name, entry) for name, entry in data.get("models", {}).items()}


def _calibration(name: str, entry: dict) -> Calibration:
    return Calibration(
        model=name,
        weights=entry["weights"],
        means=entry["means"],
        scales=entry["scales"],
        bias=entry["bias"],
        thresholds=entry["thresholds"],
        rates={level: LevelRates(**rates) for level, rates in entry.get("held_out_rates", {}).items()},
        checked=_calibration(name, entry["checked"]) if "checked" in entry else None,
    )


def calibration_for(model_label: str) -> Calibration | None:
    """The packaged model's calibration (its label holds its name), or None for any other model."""
    for name, calibration in calibrations().items():
        if name in model_label:
            return calibration
    return None


def level_rates(model_label: str, checking: bool) -> dict[Strictness, LevelRates] | None:
    """Each level's measured refusal and false refusal for this model (None: not calibrated): with the
    answerability check when it runs (`checking`) and the model is calibrated with it."""
    calibration = calibration_for(model_label)
    if checking and calibration and calibration.checked and calibration.checked.rates:
        return calibration.checked.rates
    return calibration.rates if calibration and calibration.rates else None


def checks_answerability(model_label: str) -> bool:
    """Whether this model was calibrated with the answerability check (so the check is worth its call)."""
    calibration = calibration_for(model_label)
    return calibration is not None and calibration.checked is not None


@dataclass(frozen=True)
class Abstention:
    score: float | None  # P(the documents do not state the answer); None: nothing to score
    refuse: bool
    threshold: float
    calibrated: bool
    signals: dict[str, float] | None  # what the score was computed from (SIGNALS, and CHECK_SIGNAL once checked)
    read: Literal["phrase", "yes_no"] = "phrase"  # the hidden phrase line, or a yes/no reading (rag/polar_answer.py)


_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip(" .,;:\"'")


def phrase_missing_share(phrase: str, evidence: list[Hit]) -> float:
    """0 when the phrase is in the evidence word for word, else the share of its content words that
    no evidence holds (1: none of them)."""
    wanted = _normal(phrase)
    texts = [_normal(hit.chunk.text) for hit in evidence]
    if not wanted or any(wanted in text for text in texts):
        return 0.0
    words = content_words(wanted)
    if not words:
        return 0.0
    present = set().union(*(content_words(text) for text in texts)) if texts else set()
    return len(words - present) / len(words)


def question_missing_share(question: str, evidence: list[Hit]) -> float:
    """The share of the question's terms (stemmed, no stop words) that no evidence holds."""
    wanted = set(tokenize(question))
    if not wanted:
        return 0.0
    present = set().union(*(set(tokenize(hit.chunk.text)) for hit in evidence)) if evidence else set()
    return len(wanted - present) / len(wanted)


def signals(
    reply: Reply, question: str, evidence: list[Hit], best_dense: float, question_lang: str = "en"
) -> dict[str, float] | None:
    """SIGNALS for one reply; None when the provider followed neither the form nor gave log-probabilities.
    `question_missing` is left out when no evidence is in the question's language: an English question
    over French minutes shares no terms with them whether they answer it or not (the score then counts
    it at its mean)."""
    if reply.phrase is None and reply.p_none is None:
        return None
    said_none = reply.said_none
    logprobs = reply.phrase_logprobs or [0.0]
    found = {
        "p_none": 1.0 if said_none and reply.p_none is None else (reply.p_none or 0.0),
        "phrase_mean_logprob": sum(logprobs) / len(logprobs),
        "phrase_min_logprob": min(logprobs),
        "phrase_missing": 0.0 if said_none or not reply.phrase else phrase_missing_share(reply.phrase, evidence),
        "best_dense": best_dense,
    }
    if any(hit.chunk.lang == question_lang for hit in evidence):
        found["question_missing"] = question_missing_share(question, evidence)
    return found


def abstention_score(found: dict[str, float] | None, calibration: Calibration | None) -> float | None:
    if found is None:
        return None
    if calibration is None:
        return min(found["p_none"] + UNCOPIED_PHRASE_WEIGHT * found["phrase_missing"], 1.0)
    return calibration.score(found)


def decide(
    reply: Reply,
    question: str,
    evidence: list[Hit],
    best_dense: float,
    model_label: str,
    strictness: Strictness,
    checking: bool = False,
    question_lang: str = "en",
) -> Abstention:
    """Refuse when the model wrote NONE, or when the score reaches the strictness level's threshold.
    `checking`: the answerability check will follow (`recheck`); for a model calibrated with it, only
    what the lenient level refuses is refused here, and the check's score decides the rest."""
    calibration = calibration_for(model_label)
    level: Strictness = "lenient" if checking and calibration and calibration.checked else strictness
    threshold = (calibration.thresholds if calibration else DEFAULT_THRESHOLDS)[level]
    found = signals(reply, question, evidence, best_dense, question_lang)
    score = abstention_score(found, calibration)
    refuse = reply.said_none or (score is not None and score >= threshold)
    return Abstention(
        score=score, refuse=refuse, threshold=threshold, calibrated=calibration is not None, signals=found
    )


def recheck(first: Abstention, check_none: float, model_label: str, strictness: Strictness) -> Abstention:
    """The decision again once the answerability check gave its P(NONE): the model's `checked` score
    over every signal, refused at that score's own threshold. Unchanged when there is nothing to rescore."""
    calibration = calibration_for(model_label)
    if first.refuse or first.signals is None or calibration is None or calibration.checked is None:
        return first
    found = {**first.signals, CHECK_SIGNAL: check_none}
    score = calibration.checked.score(found)
    threshold = calibration.checked.thresholds[strictness]
    return Abstention(score=score, refuse=score >= threshold, threshold=threshold, calibrated=True, signals=found)
