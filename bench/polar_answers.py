"""Yes/no questions over real PDFs, with the model: is the verdict right, is the deciding passage
cited, is a question the documents do not settle refused? (eval/datasets/polar/questions.jsonl,
frozen before tuning; bench/polar_detection.py measures the detector alone.)

Indexes the set's documents in --home (reused when already indexed), asks every question through
`Session.ask` (the app's path) and prints, for the answerable: the verdict (the answer's first word:
yes / no in the question's language) right, wrong or missing, refused, a cited passage on a gold
page, and the answer holding the deciding words; for the unanswerable, refused. `--set
polar_answers=false` measures the path without the yes/no reading, side by side.

    .venv/bin/python bench/polar_answers.py --home /tmp/polar-home --model qwen2.5-coder-1.5b --out F.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.setting_overrides import setting_overrides
from rag.polar_answer import NO_WORDS, YES_WORDS

DATASET = Path(__file__).resolve().parents[1] / "eval" / "datasets" / "polar" / "questions.jsonl"


def verdict(answer: str) -> str | None:
    """yes / no from the answer's first word, None when it opens otherwise."""
    first = answer.strip().split(maxsplit=1)[0].strip(".,;:!—-").lower() if answer.strip() else ""
    return "yes" if first in YES_WORDS else "no" if first in NO_WORDS else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--set", action="append", default=[], help="a setting NAME=VALUE (JSON value or text)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    os.environ["RAGCHAT_HOME"] = str(args.home)
    from core.settings import get_settings
    from eval.dataset import load_dataset
    from ragchat.application import open_session

    overrides = setting_overrides(args.set)
    dataset = load_dataset(args.dataset)
    session = open_session(get_settings(memory_enabled=False, llm_model=args.model, **overrides))
    session.ingest_paths(list(dataset.documents))
    print(f"load average {os.getloadavg()}; {session.models().llm}; settings {overrides}", flush=True)
    rows = []
    questions = dataset.questions[: args.limit or None]
    for q in questions:
        started = time.perf_counter()
        answer = session.ask(q.question)
        gold_pages = {(g.source, g.page) for g in q.gold}
        deciding = [r for r in q.all_references if r.lower() not in YES_WORDS | NO_WORDS]
        rows.append(
            {
                "id": q.id,
                "answerable": q.answerable,
                "polar": q.reference,
                "verdict": None if answer.refused else verdict(answer.answer),
                "refused": answer.refused,
                "cites_gold_page": any((c.source, c.page) in gold_pages for c in answer.citations),
                "holds_deciding_words": any(d.lower() in answer.answer.lower() for d in deciding),
                "answer": answer.answer,
                "signals": answer.abstention.signals if answer.abstention else None,
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
        print(f"{q.id:24} {rows[-1]['verdict']!s:5} ref {q.reference!s:5} {answer.answer[:110]!r}", flush=True)
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    n = max(len(answerable), 1)
    summary = {
        "answerable": len(answerable),
        "verdict_right": sum(r["verdict"] == r["polar"] for r in answerable) / n,
        "verdict_wrong": sum(r["verdict"] is not None and r["verdict"] != r["polar"] for r in answerable) / n,
        "no_verdict_answered": sum(r["verdict"] is None and not r["refused"] for r in answerable) / n,
        "false_refusals": sum(r["refused"] for r in answerable) / n,
        "cites_gold_page": sum(r["cites_gold_page"] for r in answerable) / n,
        "holds_deciding_words": sum(r["holds_deciding_words"] for r in answerable) / n,
        "right_on_no": sum(r["verdict"] == "no" for r in answerable if r["polar"] == "no")
        / max(sum(r["polar"] == "no" for r in answerable), 1),
        "unanswerable": len(unanswerable),
        "refused_unanswerable": sum(r["refused"] for r in unanswerable) / max(len(unanswerable), 1),
        "median_seconds": sorted(r["seconds"] for r in rows)[len(rows) // 2] if rows else None,
    }
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"settings": overrides, "summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
