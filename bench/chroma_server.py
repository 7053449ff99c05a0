"""Search latency with embedded Chroma vs a Chroma server, same corpus, side by side in one run.

Starts `chroma run` (from this environment's chromadb) on 127.0.0.1 and a free port, indexes the same
files into two temporary homes (one embedded, one pointed at the server), then, alternating so machine
load hits both alike, runs --runs searches on each, cycling through a fixed list of queries:

* search: `Session.search(query)`, the whole hybrid retrieval (query embedding, Chroma top 20 and
  BM25 top 20, fusion, fetching BM25-only chunks with their vectors); no reranker;
* chroma query: `store.query(vector, 20)` alone, with the query vector computed beforehand: the part
  the server changes.

Prints p50 / p95 in milliseconds for each and one JSON line with the same numbers. The corpus is the
project's sample documents plus a generated PDF of --pages pages. No LLM runs.

    .venv/bin/python bench/chroma_server.py
    .venv/bin/python bench/chroma_server.py --runs 400 --pages 100
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.settings import PROJECT_ROOT, get_settings
from ragchat.application import open_session
from tests.chroma_process import ChromaServer
from tests.fixtures import long_pdf_bytes

QUERIES = [
    "How long is the warranty?",
    "student discount price",
    "return an opened device",
    "What does the Pro plan cost per month?",
    "hub firmware update",
    "refund within how many days",
    "support hours on weekends",
    "how many devices can I connect",
    "cancel the subscription",
    "shipping costs for returns",
]


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return {"p50": round(statistics.median(values), 2), "p95": round(cuts[18], 2)}


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="searches per store (default 200)")
    parser.add_argument("--pages", type=int, default=40, help="pages of the generated PDF (default 40)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ragchat-bench-chroma-") as tmp:
        root = Path(tmp)
        files = {path.name: path.read_bytes() for path in sorted((PROJECT_ROOT / "sample_docs").iterdir())}
        files["generated.pdf"] = long_pdf_bytes(args.pages, seed=11, marker="benchmark")
        server = ChromaServer(root / "server-data")
        server.start()
        try:
            common = {"reranker_dir": root / "no-reranker", "reranker_model": "none"}
            sessions = {
                "embedded": open_session(get_settings(home=root / "embedded", **common)),
                "server": open_session(
                    get_settings(home=root / "server", chroma_host="127.0.0.1", chroma_port=server.port, **common)
                ),
            }
            for name, session in sessions.items():
                results = [session.ingest_bytes(file, data) for file, data in files.items()]
                assert all(r.status == "indexed" for r in results), results
                session.search("warm-up")  # opens everything before the clock starts
                chunks = session.document_index.store.count()
                print(f"{name}: {session.models().vector_store}; {chunks} chunks", file=sys.stderr)
            vectors = [sessions["embedded"].embedder.embed_query(q) for q in QUERIES]
            search: dict[str, list[float]] = {name: [] for name in sessions}
            query: dict[str, list[float]] = {name: [] for name in sessions}
            for run in range(args.runs):
                text, vector = QUERIES[run % len(QUERIES)], vectors[run % len(QUERIES)]
                for name, session in sessions.items():
                    search[name].append(timed(lambda s=session, t=text: s.search(t, rerank=False)))
                    query[name].append(timed(lambda s=session, v=vector: s.document_index.store.query(v, 20)))
        finally:
            server.stop()

    load = os.getloadavg()[0]
    figures = {
        name: {"search_ms": percentiles(search[name]), "chroma_query_ms": percentiles(query[name])} for name in search
    }
    print(
        f"\n{args.runs} searches per store, {chunks} chunks (sample_docs + a {args.pages}-page PDF); "
        f"load average {load:.1f}"
    )
    print(f"{'':10} {'search p50':>11} {'p95':>8} {'chroma query p50':>17} {'p95':>8}")
    for name, figure in figures.items():
        s, q = figure["search_ms"], figure["chroma_query_ms"]
        print(f"{name:10} {s['p50']:>9.1f}ms {s['p95']:>6.1f}ms {q['p50']:>15.1f}ms {q['p95']:>6.1f}ms")
    print(json.dumps({"runs": args.runs, "chunks": chunks, "load_average": round(load, 2), **figures}))


if __name__ == "__main__":
    main()
