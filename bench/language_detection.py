"""Language detection on short questions: accuracy and speed of core/language.py's detector on the
frozen set eval/datasets/language/questions.jsonl (84 questions, fr/en/de/es), with the candidate
languages restricted (the default: the LanguageSettings list) and unrestricted (all of py3langid's
97), plus the mistakes. Figures only, nothing is asserted. Run from the repository root:

    .venv/bin/python -m bench.language_detection
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from core.language import LANGUAGES, LanguageDetector, _identifier

DATASET = Path(__file__).resolve().parent.parent / "eval" / "datasets" / "language" / "questions.jsonl"


def main() -> None:
    rows = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    detector = LanguageDetector(tuple(LANGUAGES))
    started = time.perf_counter()
    detector("warm up: the model loads on first use")
    load_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    found = [detector.detect(row["text"]) for row in rows]
    per_question_ms = (time.perf_counter() - started) * 1000 / len(rows)
    right = [d.lang == row["lang"] for d, row in zip(found, rows, strict=True)]
    print(f"restricted to {len(detector.languages)} languages, min confidence {detector.min_confidence}:")
    print(f"  accuracy {sum(right)}/{len(rows)} = {sum(right) / len(rows):.3f}")
    print(f"  model load {load_ms:.0f} ms, {per_question_ms:.3f} ms a question")
    lowest = min(d.confidence for d, ok in zip(found, right, strict=True) if ok)
    print(f"  lowest confidence of a right answer: {lowest:.3f}")
    for d, row, ok in zip(found, rows, right, strict=True):
        if not ok:
            print(f"  wrong: {row['text']!r} ({row['lang']}) -> {d.lang} ({d.confidence:.2f})")
    everything = _identifier(tuple(_all_labels()))
    unrestricted = [everything.classify(row["text"])[0] == row["lang"] for row in rows]
    print(f"unrestricted ({len(_all_labels())} languages): {sum(unrestricted)}/{len(rows)}")
    for row, ok in zip(rows, unrestricted, strict=True):
        if not ok:
            print(f"  wrong: {row['text']!r} ({row['lang']}) -> {everything.classify(row['text'])[0]}")
    by_lang: dict[str, list[bool]] = {}
    for row, ok in zip(rows, right, strict=True):
        by_lang.setdefault(row["lang"], []).append(ok)
    print("restricted, per language: " + ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(by_lang.items())))


def _all_labels() -> list[str]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE).labels


if __name__ == "__main__":
    main()
