"""Score answers to requests about whole documents on a labelled set (eval/datasets/document_answers).

What it does: the set's documents are ingested into a temporary RAGCHAT_HOME; each request is asked
through `Session.ask` with its document selected (the app's scope picker), so the router, the scope,
the whole-document prompt, its grammar and the reply checks all run as in the app. Per request it
keeps: whether the request went the whole-document way, whether the reply was usable (not refused,
not withheld as degenerate), the share of the `expect` items (strings a correct answer contains)
found in the answer, whether every sentence cites a source, and whether an asked number of bullets
was honoured.

    .venv/bin/python -m bench.document_answers --model qwen2.5-coder-1.5b --out reports/document-answers/1.5b

Prints a row per request and a table per kind; `--out DIR` also writes every reply (replies.jsonl)
and the table (summary.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATASET = Path(__file__).resolve().parents[1] / "eval" / "datasets" / "document_answers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--only", nargs="*", default=[], help="request ids to run (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="directory for replies.jsonl and summary.md")
    parser.add_argument("--requests", default="requests.jsonl", help="the request file in --dataset")
    parser.add_argument("--thorough", action="store_true", help="read long documents section by section")
    args = parser.parse_args()
    request_file = args.dataset / args.requests
    requests = [json.loads(line) for line in request_file.read_text().splitlines() if line]
    if args.only:
        requests = [r for r in requests if r["id"] in args.only]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            RAGCHAT_HOME=str(Path(tmp) / "home"),
            RAGCHAT_LLM_PROVIDER="llamacpp",
            RAGCHAT_LLM_MODEL=args.model,
            RAGCHAT_RERANKER_DIR=str(Path(tmp) / "no-reranker"),
        )
        from core.settings import get_settings
        from rag.pipeline import AskOptions
        from ragchat.application import open_session

        session = open_session(get_settings(memory_enabled=False))
        for doc in sorted({r["doc"] for r in requests}):  # a path (long documents) or a name in docs/
            path = (request_file.parent / doc) if "/" in doc else (args.dataset / "docs" / doc)
            session.ingest_bytes(Path(doc).name, path.read_bytes())
        print(f"model {args.model}; {len(requests)} requests; load average {os.getloadavg()[0]:.2f}", flush=True)
        rows = []
        for request in requests:
            started = time.perf_counter()
            options = AskOptions(documents=(Path(request["doc"]).name,), thorough=args.thorough)
            answer = session.ask(request["text"], options)
            row = score(request, answer.answer, answer.refused, answer.document_request is not None)
            row["method"] = answer.document_request.method if answer.document_request else "passages"
            row["spread"] = spread_cited(request, [c.page for c in answer.citations])
            row["seconds"] = round(time.perf_counter() - started, 1)
            row["supported"] = [s.supported for s in answer.support]
            row["model"] = answer.models.llm
            rows.append(row)
            print(
                f"{row['id']} {row['kind']:<24} usable {int(row['usable'])} recall {row['recall']:.2f} "
                f"cited {int(row['all_cited'])} form {row['form_ok']} supported {sum(row['supported'])}/"
                f"{len(row['supported'])} {row['seconds']:5.1f}s | " + answer.answer.replace("\n", " ⏎ ")[:160],
                flush=True,
            )
    table = summary(rows)
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "replies.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        (args.out / "summary.md").write_text(
            f"`python -m bench.document_answers --model {args.model} --requests {args.requests}"
            f"{' --thorough' if args.thorough else ''}`, {len(rows)} requests\n\n{table}\n"
        )


def score(request: dict, text: str, refused: bool, routed: bool) -> dict:
    """One request's figures: a refusal or a withheld reply scores 0 recall and is not usable."""
    from rag.citations import markers_in, split_sentences, strip_markers, tidy_markers

    usable = not refused and bool(text.strip())
    lowered = text.lower()
    expect = request["expect"]
    found = [item for item in expect if item.lower() in lowered] if usable else []
    sentences = [s for s in split_sentences(tidy_markers(text)) if strip_markers(s).strip()]
    bullets = [line for line in text.splitlines() if line.lstrip().startswith("- ")]
    asked = request.get("bullets")
    return {
        "id": request["id"],
        "kind": request["kind"],
        "request": request["text"],
        "routed": routed,
        "usable": usable,
        "recall": len(found) / len(expect) if expect else 1.0,
        "missed": [item for item in expect if item not in found],
        "all_cited": usable and bool(sentences) and all(markers_in(s) for s in sentences),
        "form_ok": None if not asked else (usable and len(bullets) == asked),
        "answer": text,
    }


def spread_cited(request: dict, pages: list[int | None]) -> float | None:
    """Share of the request's `spread` pages (or ranges, "3-5" or [3, 5]) that the answer cites; None without."""
    wanted = request.get("spread")
    if not wanted:
        return None
    cited = {p for p in pages if p}
    hits = 0
    for item in wanted:  # a page, a "3-5" range or a [3, 5] pair
        first, last = (item[0], item[-1]) if isinstance(item, list) else (str(item).partition("-")[::2])
        hits += any(int(first) <= p <= int(last or first) for p in cited)
    return hits / len(wanted)


def summary(rows: list[dict]) -> str:
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row)
    lines = [
        "| kind | n | whole-document route | usable | expected items found | every sentence cited | bullets as asked "
        "| spread pages cited | seconds (median) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, group in [*sorted(by_kind.items()), ("all", rows)]:
        formed = [r["form_ok"] for r in group if r["form_ok"] is not None]
        spread = [r["spread"] for r in group if r.get("spread") is not None]
        seconds = sorted(r["seconds"] for r in group)[len(group) // 2]
        spread_text = f"{sum(spread) / len(spread):.2f}" if spread else "–"
        lines.append(
            f"| {kind} | {len(group)} | {_share(r['routed'] for r in group)} | {_share(r['usable'] for r in group)} "
            f"| {sum(r['recall'] for r in group) / len(group):.2f} | {_share(r['all_cited'] for r in group)} "
            f"| {_share(formed) if formed else '–'} | {spread_text} | {seconds} |"
        )
    return "\n".join(lines)


def _share(flags) -> str:
    values = list(flags)
    return f"{sum(values)}/{len(values)}"


if __name__ == "__main__":
    main()
