"""Is it a yes/no question? Precision and recall of rag/polar.py on the frozen labelled messages of
eval/datasets/polar/detect.jsonl, over the whole set, its odd and even lines (the rules were written
reading only the odd ones' mistakes), and each language; `--errors` lists the messages it gets wrong.

    .venv/bin/python bench/polar_detection.py --errors
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.polar import is_polar

DATASET = Path(__file__).resolve().parents[1] / "eval" / "datasets" / "polar" / "detect.jsonl"


def scores(rows: list[dict]) -> str:
    tp = sum(r["pred"] and r["polar"] for r in rows)
    fp = sum(r["pred"] and not r["polar"] for r in rows)
    fn = sum(not r["pred"] and r["polar"] for r in rows)
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    right = sum(r["pred"] == r["polar"] for r in rows)
    return f"{len(rows):>4} messages  precision {precision:.3f}  recall {recall:.3f}  accuracy {right / len(rows):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--errors", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.dataset.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        r["pred"] = is_polar(r["text"], r["lang"])
    print(f"all        {scores(rows)}")
    print(f"odd lines  {scores(rows[0::2])}")
    print(f"even lines {scores(rows[1::2])}")
    for lang in sorted({r["lang"] for r in rows}):
        print(f"{lang:10} {scores([r for r in rows if r['lang'] == lang])}")
    if args.errors:
        for n, r in enumerate(rows, 1):
            if r["pred"] != r["polar"]:
                print(f"line {n:>3} {'odd ' if n % 2 else 'even'} labelled {r['polar']!s:5} [{r['lang']}] {r['text']}")


if __name__ == "__main__":
    main()
