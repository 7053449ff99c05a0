"""Which requests are answered as a list found in the text ("every date", "who is mentioned?"), on the
frozen dev set `eval/datasets/routing/list_kinds.jsonl`, and how many ordinary questions are (no LLM).

A request is answered by extraction when `rag/list_requests.list_kind` gives it a kind and the router's
P(document) reaches `route_list_threshold` (rag/document_stages.py RouteRequest). For each kind (dates,
figures, names): precision and recall of the rule alone and with the router's gate; `mixed` and `none`
rows are negatives for every kind. Then the labelled requests the rule was not tuned on (the routing
sets and the document-answer sets: a list of dates, figures or names against everything else, the
rule alone), and SQuAD 2.0's questions (../shared/data: each asks for one fact, so every one taken for
a list is a false positive).

    .venv/bin/python bench/list_requests.py [--set route_list_threshold=0.3] [--show]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.setting_overrides import setting_overrides
from core.settings import get_settings
from providers.embedder import Embedder
from rag.list_requests import list_kind
from rag.router import RouterWeights

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "eval" / "datasets" / "routing" / "list_kinds.jsonl"
SQUAD = [ROOT.parent / "shared" / "data" / name / "questions.jsonl" for name in ("squad2-normans", "squad2-more")]
KINDS = ("dates", "figures", "names")
HELD_OUT = [
    ROOT / "eval" / "datasets" / "routing" / name
    for name in ("requests.jsonl", "requests_v2.jsonl", "general_v3.jsonl")
] + [ROOT / "eval" / "datasets" / "document_answers" / name for name in ("requests.jsonl", "requests-long.jsonl")]
LIST_KINDS = {"entities", "numbers", "dates", "names"}  # those sets' labels for a list of a kind's items


def scores(rows: list[dict[str, str]], taken: Sequence[str | None]) -> dict[str, tuple[float, float, int, int]]:
    """Per kind, and for all kinds together: precision, recall, true positives, positives."""
    result = {}
    for name, kinds in (*((kind, {kind}) for kind in KINDS), ("all", set(KINDS))):
        tp = sum(t in kinds and t == r["label"] for r, t in zip(rows, taken, strict=True))
        said = sum(t in kinds for t in taken)
        wanted = sum(r["label"] in kinds for r in rows)
        result[name] = (tp / said if said else 1.0, tp / wanted if wanted else 1.0, tp, wanted)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], help="a setting override, name=value")
    parser.add_argument("--show", action="store_true", help="print the dev set's misses")
    args = parser.parse_args()
    settings = get_settings(**setting_overrides(args.set))
    embedder = Embedder(settings)
    weights = RouterWeights.load()
    rows = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [r["text"] for r in rows]
    p = weights.probability(np.asarray(embedder.embed(texts), dtype=np.float32))
    rule = [list_kind(t) for t in texts]
    gated = [
        k if k is not None and pd >= settings.route_list_threshold else None for k, pd in zip(rule, p, strict=True)
    ]
    print(f"dev set: {len(rows)} requests; route_list_threshold {settings.route_list_threshold}")
    print(f"{'':22} {'precision':>9} {'recall':>7}   {'(with the router gate)':>24}")
    alone, both = scores(rows, rule), scores(rows, gated)
    for kind in (*KINDS, "all"):
        a, b = alone[kind], both[kind]
        print(f"{kind:22} {a[0]:>9.2f} {a[1]:>7.2f}   {b[0]:>12.2f} {b[1]:>7.2f}  ({b[2]}/{b[3]})")
    if args.show:
        for r, k, g, pd in zip(rows, rule, gated, p, strict=True):
            wanted = r["label"] if r["label"] in KINDS else None
            if g != wanted:
                print(f"  {r['id']} {r['label']:>7} rule={k} p={pd:.2f}: {r['text']}")
    held_out = [
        json.loads(line) for path in HELD_OUT for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    wanted = [row.get("kind") in LIST_KINDS for row in held_out]
    said = [list_kind(row["text"]) is not None for row in held_out]
    tp = sum(w and s for w, s in zip(wanted, said, strict=True))
    print(
        f"not tuned on: {len(held_out)} labelled requests, {sum(wanted)} lists; the rule alone: precision "
        f"{tp / max(sum(said), 1):.2f}, recall {tp / max(sum(wanted), 1):.2f}"
    )
    questions = [
        json.loads(line)["question"]
        for path in SQUAD
        if path.exists()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    taken = [q for q in questions if list_kind(q) is not None]
    if taken:
        p_taken = weights.probability(np.asarray(embedder.embed(taken), dtype=np.float32))
        routed = [q for q, pd in zip(taken, p_taken, strict=True) if pd >= settings.route_list_threshold]
    else:
        routed = []
    print(f"SQuAD 2.0: {len(questions)} one-fact questions; taken for lists by the rule {len(taken)}, ", end="")
    print(f"with the router gate {len(routed)}")
    for q in routed:
        print(f"  {q}")


if __name__ == "__main__":
    main()
