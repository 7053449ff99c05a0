"""Why each question of an eval report was refused or answered, by category: the reading of a
`ragchat eval` report (eval.json) that says which stage to work on.

Causes, in the order the answer path decides them: `no evidence` (nothing reached the relevance gate:
refused without the model), `said NONE` (the reply's phrase line), `score` (the abstention score
reached the level's threshold), `withheld` (the support check found none of the reply's sentences in
its evidence), `said not covered` (the reply refused in its own words), `answered`.

    .venv/bin/python bench/refusal_causes.py reports/real-documents/eval.json [--list CAUSE]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path)
    parser.add_argument("--list", help="print the questions with this cause")
    args = parser.parse_args()
    rows = json.loads(args.report.read_text(encoding="utf-8"))["questions"]
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        table[row["category"]][cause(row)] += 1
    causes = ["answered", "no evidence", "said NONE", "score", "withheld", "said not covered"]
    print(f"{'category':14}" + "".join(f"{c:>17}" for c in causes))
    for category, counts in sorted(table.items()):
        print(f"{category:14}" + "".join(f"{counts[c]:>17}" for c in causes))
    if args.list:
        for row in rows:
            if cause(row) == args.list:
                print(f"- {row['id']} ({row['category']}): {row['question']}\n    {row['answer'][:200]}")


if __name__ == "__main__":
    main()
