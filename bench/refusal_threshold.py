"""Could a signal computed before the LLM refuse SQuAD 2.0's unanswerable questions? (issue #8)

The answer path refuses without calling the LLM when the best chunk's cosine similarity is below
`RAGCHAT_REFUSAL_THRESHOLD` (0.25). This indexes the SQuAD "Normans" article into a temporary home, runs
the real hybrid search for all 208 questions (no LLM) and prints, for a sweep of thresholds, the share
of unanswerable questions each signal would refuse and of answerable ones it would wrongly refuse:

- the best chunk's cosine similarity (today's retrieval threshold);
- lexical answerability: the share of the question's terms (BM25 stems, question words dropped) found
  in one sentence of the top-k chunks, in two adjacent sentences, or anywhere in the top k;
- whether every name and number of the question occurs within two adjacent sentences.

    .venv/bin/python bench/refusal_threshold.py [--squad DIR]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from pathlib import Path

from core.schemas import Hit
from core.settings import get_settings
from core.text import tokenize
from eval.dataset import load_dataset
from rag.citations import split_sentences
from ragchat.application import open_session

COSINE_THRESHOLDS = (0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
COVERAGE_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
QUESTION_WORDS = frozenset(tokenize("what when where which who whom whose why how name year type kind many much"))
_NAME_OR_NUMBER = re.compile(r"\b[A-Z][\w'’-]+|\b\d[\d,.]*")


def lexical_signals(question: str, hits: list[Hit]) -> dict[str, float]:
    """Question-term coverage by one sentence, by two adjacent ones, by all top-k text; names in a window."""
    terms = [t for t in dict.fromkeys(tokenize(question)) if t not in QUESTION_WORDS]
    # The first word is capitalized anyway: names are the capitalized words after it.
    names = set(tokenize(" ".join(_NAME_OR_NUMBER.findall(question[1:]))))
    one = two = 0.0
    names_found = not names
    everything: set[str] = set()
    for hit in hits:
        sentences = [set(tokenize(s)) for s in split_sentences(hit.chunk.text)]
        for i, sentence in enumerate(sentences):
            window = sentence | (sentences[i + 1] if i + 1 < len(sentences) else set())
            everything |= sentence
            one = max(one, _share(terms, sentence))
            two = max(two, _share(terms, window))
            names_found = names_found or names <= window
    return {"one sentence": one, "two sentences": two, "top k": _share(terms, everything), "names": float(names_found)}


def _share(terms: list[str], available: set[str]) -> float:
    return sum(t in available for t in terms) / len(terms) if terms else 1.0


def _refused_shares(values: dict[bool, list[float]], threshold: float) -> tuple[float, float]:
    unanswerable = sum(v < threshold for v in values[False]) / len(values[False])
    answerable = sum(v < threshold for v in values[True]) / len(values[True])
    return unanswerable, answerable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, default=get_settings().eval_squad_dir)
    args = parser.parse_args()
    questions_file = args.squad / "questions.jsonl"
    if not questions_file.is_file():
        print(f"SQuAD data not found in {args.squad}: nothing to measure.")
        return 0
    dataset = load_dataset(questions_file)
    signals: dict[str, dict[bool, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-") as home:
        settings = get_settings(home=Path(home))
        session = open_session(settings)
        session.ingest_paths(dataset.documents)
        for question in dataset.questions:
            hits = session.search(question.question).hits
            values = {"cosine": max((h.scores.dense or 0.0) for h in hits) if hits else 0.0}
            values |= lexical_signals(question.question, hits[: settings.top_k])
            for name, value in values.items():
                signals.setdefault(name, {True: [], False: []})[question.answerable].append(value)
    cosine = signals.pop("cosine")
    names = signals.pop("names")
    print(f"{dataset.name}: {len(cosine[True])} answerable, {len(cosine[False])} unanswerable questions")
    for label, answerable in (("answerable", True), ("unanswerable", False)):
        values = cosine[answerable]
        quartiles = statistics.quantiles(values, n=4)
        print(
            f"  best-chunk cosine, {label:<12} median {statistics.median(values):.3f}, "
            f"quartiles {quartiles[0]:.3f} / {quartiles[2]:.3f}, min {min(values):.3f}, max {max(values):.3f}"
        )
    print("\n  cosine threshold | unanswerable refused | answerable wrongly refused")
    for threshold in COSINE_THRESHOLDS:
        print("  {:16.2f} | {:20.3f} | {:26.3f}".format(threshold, *_refused_shares(cosine, threshold)))
    print("\n  question terms found in (top k chunks) | threshold | unanswerable refused | answerable wrongly refused")
    for name, values in signals.items():
        for threshold in COVERAGE_THRESHOLDS:
            shares = _refused_shares(values, threshold)
            print("  {:38} | {:9.1f} | {:20.3f} | {:26.3f}".format(name, threshold, *shares))
    print(
        "\n  refuse when a name or number of the question is not within two adjacent sentences: "
        "unanswerable refused {:.3f}, answerable wrongly refused {:.3f}".format(*_refused_shares(names, 0.5))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
