"""`ragchat search`: ranked chunks for a query, no LLM."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from core.schemas import Scores
from ragchat.cli.common import add_retrieval_flags, print_json, retrieval_flags, session_for

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands


def add_search(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[as_user], help="ranked chunks for a query, no LLM")
    p.add_argument("query", nargs="?")
    p.add_argument("-k", type=int, default=None)
    p.add_argument("--queries", help="JSONL file of {id, text}; prints one JSON line per query")
    p.add_argument("--candidates", action="store_true", help="show every fused candidate, not only the top k")
    add_retrieval_flags(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    session = session_for(args)
    flags = retrieval_flags(args)
    if args.queries:
        with open(args.queries, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    query = json.loads(line)
                    hits = session.search(query["text"], args.k, **flags).hits
                    print(json.dumps({"id": query["id"], "hits": [h.to_contract() for h in hits]}, ensure_ascii=False))
        return 0
    if not args.query:
        print("search needs a QUERY or --queries FILE", file=sys.stderr)
        return 2
    retrieval = session.search(args.query, args.k, **flags)
    hits = retrieval.candidates if args.candidates else retrieval.hits
    for partial in retrieval.still_embedding:
        print(f"({partial.describe()})", file=sys.stderr)
    if args.json:
        print_json([h.to_contract() for h in hits])
        return 0
    for rank, hit in enumerate(hits, start=1):
        print(f"{rank}. {hit.chunk.source} ({hit.chunk.locator})  {_scores_line(hit.scores)}")
        print(f"   {hit.chunk.text[:200].replace(chr(10), ' ')}")
    print(
        f"\n(fusion {retrieval.fusion}, BM25 weight {retrieval.bm25_weight:g}, reranker: {retrieval.reranker}; "
        f"{retrieval.timings_ms.get('search_ms', 0):.0f} ms)",
        file=sys.stderr,
    )
    return 0


def _scores_line(scores: Scores) -> str:
    parts = [
        f"bm25 #{scores.bm25_rank}" if scores.bm25_rank else "bm25 –",
        f"dense #{scores.dense_rank}" if scores.dense_rank else "dense –",
        f"cos {scores.dense:.3f}" if scores.dense is not None else "",
        f"fused {scores.fused:.4f}" if scores.fused is not None else "",
        f"rerank {scores.rerank:.3f}" if scores.rerank is not None else "",
    ]
    return " · ".join(p for p in parts if p)
