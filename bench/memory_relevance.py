"""Which questions get the memory lines in their prompt (`memory/relevance.py`), scored on the frozen
labelled set `eval/datasets/memory/relevance.jsonl` (each case: a question, the memory lines it is asked
with, and whether a right answer needs them).

For each case the real `Memory.context_for` runs over a pair of fresh memory files holding the case's
lines (the packaged embedder, the language detector; no language model). Printed: precision and recall
of "the lines are given" at the shipped `memory_relevant_similarity` and at the other thresholds asked
for, by kind and language; then, with the persona memory of `eval/datasets/memory/persona`, the share
of the document questions of the real-documents and Normans sets that are given the lines (those with
a first-person word apart).

    .venv/bin/python bench/memory_relevance.py [--thresholds 0.35 0.4 0.45 0.5 0.55]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATASET = ROOT / "eval/datasets/memory/relevance.jsonl"
PERSONA = ROOT / "eval/datasets/memory/persona"
DOCUMENT_SETS = (
    ROOT / "eval/datasets/real_documents/questions.jsonl",
    ROOT.parent / "shared/data/squad2-normans/questions.jsonl",
)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _scores(predicted: list[bool], expected: list[bool]) -> str:
    tp = sum(p and e for p, e in zip(predicted, expected, strict=True))
    fp = sum(p and not e for p, e in zip(predicted, expected, strict=True))
    fn = sum(e and not p for p, e in zip(predicted, expected, strict=True))
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    accuracy = sum(p == e for p, e in zip(predicted, expected, strict=True)) / len(expected)
    return f"precision {precision:.3f}  recall {recall:.3f}  accuracy {accuracy:.3f}  (n {len(expected)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--thresholds", type=float, nargs="*", default=[0.35, 0.4, 0.45, 0.5, 0.55, 0.6])
    parser.add_argument("--errors", action="store_true", help="print the cases the shipped threshold gets wrong")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(RAGCHAT_HOME=str(Path(tmp) / "home"), RAGCHAT_RERANKER_DIR=str(Path(tmp) / "none"))
        from bench.memory_judgment import fresh_memory
        from core.language import LanguageDetector
        from core.schemas import MemoryFacts
        from core.settings import get_settings
        from memory.memory import Memory
        from memory.relevance import has_word_table, speaks_of_self
        from ragchat.application import App

        settings = get_settings()
        app = App(settings)
        detect = LanguageDetector.from_settings(settings)
        memories: dict[tuple[tuple[str, ...], tuple[str, ...]], Memory] = {}

        def memory_of(user: list[str], company: list[str]) -> Memory:
            """A Memory over fresh files holding these lines (one per set of lines, its vectors cached)."""
            key = (tuple(user), tuple(company))
            if key not in memories:
                prior = [("USER", line) for line in user] + [("COMPANY", line) for line in company]
                memories[key] = fresh_memory(Path(tmp) / f"m{len(memories)}", app, prior)[0]
            return memories[key]

        def signals(question: str, user: list[str], company: list[str]) -> tuple[bool, float, bool]:
            """(a first-person word, the closeness to the closest fact, a standing wish given alone),
            checked against what context_for gives."""
            lang = detect(question)
            memory = memory_of(user, company)
            facts = MemoryFacts(
                user=[e for e in user if not memory.states_wish(e)],
                company=[e for e in company if not memory.states_wish(e)],
            )
            own, close = speaks_of_self(question, lang), memory.closeness(question, facts)
            about_self = not has_word_table(lang) or own or close >= settings.memory_relevant_similarity
            given = memory.context_for(question, lang)
            count = len(given.user) + len(given.company)
            wishes = len(user) + len(company) - len(facts.user) - len(facts.company)
            assert count == (len(user) + len(company) if about_self else wishes), question
            return own, close, count > 0 and not about_self

        rows = _rows(args.dataset)
        read = [signals(r["question"], r["user"], r["company"]) for r in rows]
        expected = [bool(r["needs_memory"]) for r in rows]
        shipped = settings.memory_relevant_similarity
        print(f"{args.dataset.name}: {len(rows)} cases, {sum(expected)} need the memory")
        print("every line given (a question about the user or their company):")
        for threshold in sorted({*args.thresholds, shipped}):
            predicted = [own or close >= threshold for own, close, _ in read]
            mark = "  (shipped)" if threshold == shipped else ""
            print(f"  threshold {threshold:.2f}: {_scores(predicted, expected)}{mark}")
        print(f"  first-person words alone: {_scores([own for own, _, _ in read], expected)}")
        about_self = [own or close >= shipped for own, close, _ in read]
        predicted = [about or wish for about, (_, _, wish) in zip(about_self, read, strict=True)]
        print(f"any line given (standing wishes too): {_scores(predicted, expected)}")
        for field in ("kind", "lang"):
            groups: dict[str, list[int]] = defaultdict(list)
            for index, row in enumerate(rows):
                groups[str(row.get(field))].append(index)
            print(f"by {field} (shipped threshold): every line given / only standing wishes / need them")
            for name, indexes in sorted(groups.items()):
                every = sum(about_self[i] for i in indexes)
                wishes = sum(read[i][2] for i in indexes)
                needed = sum(expected[i] for i in indexes)
                print(f"  {name:20} {every:3} / {wishes:3} / {needed:3} of {len(indexes)}")
        if args.errors:
            for row, (own, close, _), p, e in zip(rows, read, about_self, expected, strict=True):
                if p != e:
                    print(
                        f"  {'missed' if e else 'given'}: {row['id']} [{row['lang']}] own={own} cos={close:.2f} "
                        f"{row['question']!r}"
                    )

        persona = [
            [line[2:].strip() for line in (PERSONA / name).read_text(encoding="utf-8").splitlines() if line[:2] == "- "]
            for name in ("USER_MEMORY.md", "COMPANY_MEMORY.md")
        ]
        for path in DOCUMENT_SETS:
            if not path.is_file():
                print(f"{path}: absent, skipped")
                continue
            questions = [r["question"] for r in _rows(path) if "question" in r]
            read = [signals(q, *persona) for q in questions]
            own = sum(o for o, _, _ in read)
            close = sum(not o and c >= shipped for o, c, _ in read)
            print(
                f"{path.parent.name}: {len(questions)} document questions with the persona memory: "
                f"{own} have a first-person word, {close} more are given the lines by closeness, "
                f"{len(questions) - own - close} are asked with the standing wishes alone"
            )


if __name__ == "__main__":
    main()
