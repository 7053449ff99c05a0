"""Requests to the assistant are not memory: scored on the frozen set `eval/datasets/memory/requests.jsonl`
(146 messages in 7 languages: requests to write, send, compute, book… that hold first-person words, and
statements that open with the same words used as nouns).

Without `--model`: the rule alone (memory/asked.py `said_part`): a request is recognised when nothing of
it is left as said, and then no model reads it. Precision and recall of "recognised as a request".
With `--model`: each message through the real `Memory.remember` on fresh files, and whether anything
was stored: requests that wrote a line (should be none), statements that wrote one (should be all).

    .venv/bin/python bench/memory_requests.py [--errors]
    RAGCHAT_HOME=/tmp/h .venv/bin/python bench/memory_requests.py --model qwen2.5-coder-1.5b
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.memory_judgment import fresh_memory  # noqa: E402
from memory.asked import said_part  # noqa: E402

DATASET = ROOT / "eval" / "datasets" / "memory" / "requests.jsonl"


def _rule(rows: list[dict], errors: bool) -> None:
    recognised = [not said_part(row["message"], row["lang"]).strip() for row in rows]
    requests = [not row["expected_said"] for row in rows]
    hits = sum(r and q for r, q in zip(recognised, requests, strict=True))
    print(
        f"rule: requests recognised {hits}/{sum(requests)} (recall {hits / sum(requests):.3f}), "
        f"precision {hits / max(sum(recognised), 1):.3f}; statements left to the model "
        f"{sum(not r and not q for r, q in zip(recognised, requests, strict=True))}/{len(rows) - sum(requests)}"
    )
    if errors:
        for row, r, q in zip(rows, recognised, requests, strict=True):
            if r != q:
                print(f"  {'missed request' if q else 'statement taken'} ({row['lang']}): {row['message']}")


def _stored(rows: list[dict], model: str, errors: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(RAGCHAT_HOME=str(Path(tmp) / "home"), RAGCHAT_RERANKER_DIR=str(Path(tmp) / "none"))
        from core.settings import get_settings
        from ragchat.application import App

        app = App(get_settings(llm_provider="llamacpp", llm_model=model))
        app.llm()
        wrote = []
        for number, row in enumerate(rows):
            memory, files = fresh_memory(Path(tmp) / f"m{number}", app, [])
            memory.remember(row["message"], lang=row["lang"])
            lines = [line for f in files.values() for line in f.entries()]
            wrote.append(bool(lines))
            if errors and bool(lines) != row["expected_said"]:
                print(f"  {row['category']} ({row['lang']}): {row['message']}\n    stored: {lines}")
    requests = [w for w, row in zip(wrote, rows, strict=True) if not row["expected_said"]]
    statements = [w for w, row in zip(wrote, rows, strict=True) if row["expected_said"]]
    print(
        f"{model}: requests that stored a line {sum(requests)}/{len(requests)}; "
        f"statements stored {sum(statements)}/{len(statements)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="also run the memory pass with this packaged llama.cpp model")
    parser.add_argument("--errors", action="store_true", help="print the messages judged wrong")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    _rule(rows, args.errors)
    if args.model:
        _stored(rows, args.model, args.errors)


if __name__ == "__main__":
    main()
