"""Why each question of an eval report was refused or answered, by category: the reading of a
`ragchat eval` report (eval.json) that says which stage to work on.

Causes, in the order the answer path decides them: `no evidence` (nothing reached the relevance gate:
refused without the model), `said NONE` (the reply's phrase line), `score` (the abstention score
reached the level's threshold), `withheld` (the support check found none of the reply's sentences in
its evidence), `said not covered` (the reply refused in its own words), `answered`.

    .venv/bin/python bench/refusal_causes.py reports/real-documents/eval.json [--list CAUSE] [--signals]

`--signals`: how well each abstention signal, and the score, tells each category of unanswered
question from the answerable ones (ROC AUC; 0.5 is chance, above: the category scores higher).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def cause(row: dict) -> str:
    if not row["refused"]:
        return "answered"
    if not row["given"]:
        return "no evidence"
    abstention = row.get("abstention") or {}
    phrase = (abstention.get("phrase") or "").strip().upper()
    if phrase.startswith("NONE"):
        return "said NONE"
    score, threshold = abstention.get("score"), abstention.get("threshold")
    if score is not None and threshold is not None and score >= threshold:
        return "score"
    if row.get("withheld"):
        return "withheld"
    return "said not covered"


MIN_ROWS = 10


def signal_separation(rows: list[dict]) -> None:
    from bench.answerability_signals import auc  # the calibration's own AUC (loads the answer path)

    scored = [r for r in rows if (r.get("abstention") or {}).get("signals")]
    names = [*dict.fromkeys(n for r in scored for n in r["abstention"]["signals"]), "score"]

    def value(row: dict, name: str) -> float | None:
        abstention = row["abstention"]
        return abstention.get("score") if name == "score" else abstention["signals"].get(name)

    categories = sorted({r["category"] for r in scored} - {"answerable"})
    print(f"\n{'signal (AUC against answerable)':34}" + "".join(f"{c:>15}" for c in categories))
    for name in names:
        answerable = [v for r in scored if r["category"] == "answerable" and (v := value(r, name)) is not None]
        cells = []
        for category in categories:
            others = [v for r in scored if r["category"] == category and (v := value(r, name)) is not None]
            few = min(len(others), len(answerable)) < MIN_ROWS  # a polar question's own signals, say
            cells.append(f"{'–':>15}" if few else f"{auc(others, answerable):15.3f}")
        print(f"{name:34}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path)
    parser.add_argument("--list", help="print the questions with this cause")
    parser.add_argument("--signals", action="store_true", help="each abstention signal's AUC by category")
    args = parser.parse_args()
    rows = json.loads(args.report.read_text(encoding="utf-8"))["questions"]
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        table[row["category"]][cause(row)] += 1
    causes = ["answered", "no evidence", "said NONE", "score", "withheld", "said not covered"]
    print(f"{'category':14}" + "".join(f"{c:>17}" for c in causes))
    for category, counts in sorted(table.items()):
        print(f"{category:14}" + "".join(f"{counts[c]:>17}" for c in causes))
    if args.signals:
        signal_separation(rows)
    if args.list:
        for row in rows:
            if cause(row) == args.list:
                print(f"- {row['id']} ({row['category']}): {row['question']}\n    {row['answer'][:200]}")


if __name__ == "__main__":
    main()
