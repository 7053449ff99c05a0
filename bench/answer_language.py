"""Answers across languages, end to end on the real models: the multilingual dev set's documents that
are small enough to ingest quickly (the French minutes and sample_docs/) are indexed in a temporary
home, and its questions about them are asked (French over French, French over English, English
over French). Reported per kind: answer-language accuracy (the detector on the answer, refusals
excluded, against the question's language), refusals, and fact accuracy on the questions whose gold
string holds a number (every number of it appears in the answer; other facts would need a judge
across languages). Figures only, nothing is asserted. Run from the repository root:

    .venv/bin/python -m bench.answer_language --limit 8                  # 8 questions a kind, the 0.5B
    .venv/bin/python -m bench.answer_language --llm qwen2.5-coder-1.5b   # all 48, the app's model
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from core.language import LanguageDetector
from core.settings import PROJECT_ROOT, get_settings

DATASET = PROJECT_ROOT / "eval" / "datasets" / "multilingual"
DOCUMENTS = [DATASET / "docs" / "pv-demolition-2023-06-20.txt", *sorted((PROJECT_ROOT / "sample_docs").iterdir())]
_NUMBER = re.compile(r"\d+(?:[ ,.]\d{3})*")


def numbers(text: str) -> set[str]:
    """The numbers of a text with their thousands separators dropped ("1 200 000" → "1200000")."""
    return {re.sub(r"[ ,.]", "", n) for n in _NUMBER.findall(text)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="qwen2.5-coder-0.5b")
    parser.add_argument("--limit", type=int, default=0, help="questions a kind (0: all)")
    args = parser.parse_args()
    names = {p.name for p in DOCUMENTS}
    rows = [json.loads(line) for line in (DATASET / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["document"] in names]
    if args.limit:
        rows = [r for kind in ("fr-fr", "fr-en", "en-fr") for r in [x for x in rows if x["kind"] == kind][: args.limit]]
    home = Path(tempfile.mkdtemp(prefix="answer-language-"))
    os.environ.update(RAGCHAT_HOME=str(home), RAGCHAT_LLM_PROVIDER="llamacpp", RAGCHAT_LLM_MODEL=args.llm)
    from ragchat.application import open_session

    try:
        session = open_session(get_settings(memory_enabled=False))
        for result in session.ingest_paths(DOCUMENTS):
            assert result.status == "indexed", result
        detect = LanguageDetector()
        stats: dict[str, dict[str, int]] = {}
        started = time.perf_counter()
        for row in rows:
            answer = session.ask(row["question"])
            kind = stats.setdefault(
                row["kind"], dict.fromkeys(["asked", "refused", "in_language", "facts", "right"], 0)
            )
            kind["asked"] += 1
            wanted = numbers(row["gold"])
            if answer.refused:
                kind["refused"] += 1
            else:
                kind["in_language"] += detect(answer.answer) == row["question_lang"]
            if wanted:
                kind["facts"] += 1
                kind["right"] += not answer.refused and wanted <= numbers(answer.answer)
            print(f"{row['id']} {row['kind']} {row['question']!r} -> {answer.answer!r}", flush=True)
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(f"\n{args.llm}, {len(rows)} questions in {seconds:.0f} s")
    print("| kind | asked | refused | answer in the question's language | number facts right |")
    print("|---|---|---|---|---|")
    for name, k in stats.items():
        answered = k["asked"] - k["refused"]
        print(f"| {name} | {k['asked']} | {k['refused']} | {k['in_language']}/{answered} | {k['right']}/{k['facts']} |")


if __name__ == "__main__":
    main()
