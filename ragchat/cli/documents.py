"""The commands that write or list the documents: ingest, reindex, resume, redactions, docs, delete."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.schemas import IngestProgress
from ingestion.write_lock import WriterBusy
from providers.chroma_server import VectorStoreUnavailable
from ragchat.cli.common import print_json, session_for

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands


def add_ingest(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ingest", parents=[as_user], help="index PDF, TXT and Markdown files")
    p.add_argument("paths", nargs="+")
    p.add_argument("--json", action="store_true")
    p.add_argument("--password", help="password of encrypted PDFs among the files")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another process is writing the index, fail at once (exit 1) instead of waiting for it",
    )
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replace e-mails, phone numbers, IPs and long tokens with placeholders (default: RAGCHAT_REDACT_PII)",
    )
    p.set_defaults(func=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    session = session_for(args)
    live = sys.stderr.isatty()
    results = session.ingest_paths(
        [Path(p) for p in args.paths],
        password=args.password,
        redact=args.redact,
        progress=_progress_line if live else _WaitNotice(),
        wait=not args.no_wait,
    )
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:  # seconds: until fully indexed; searchable_s: until keyword search found it
        print_json([r.model_dump() for r in results])
    else:
        for r in results:
            pages = f"{r.pages} pages, " if r.pages is not None else ""
            if r.status in ("failed", "cancelled"):
                detail = r.error
            else:
                detail = f"{pages}{r.chunks} chunks"
                if r.searchable_s is not None and r.status == "indexed":
                    detail += f" (searchable by keyword after {r.searchable_s:.1f} s, indexed after {r.seconds:.1f} s)"
            print(f"{r.status:9} {r.source}: {detail}")
            for warning in r.warnings:
                print(f"          note: {warning}")
    return 1 if any(r.status == "failed" for r in results) else 0


def _progress_line(name: str, update: IngestProgress) -> None:
    """A live progress line on a terminal (never in a pipe, so --json output stays clean)."""
    print(f"\r\033[K{name}: {update.describe()}", end="", file=sys.stderr, flush=True)


class _WaitNotice:
    """Without a terminal to redraw: say whom the ingest waits for, when that changes (at most every 10 s)."""

    def __init__(self) -> None:
        self._said = ("", 0.0)

    def __call__(self, name: str, update: IngestProgress) -> None:
        if not update.stage.startswith("waiting for "):
            return
        said, at = self._said
        now = time.monotonic()
        if (update.stage != said and now - at >= 10) or not said:
            self._said = (update.stage, now)
            print(f"{name}: {update.stage}…", file=sys.stderr, flush=True)


def add_reindex(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "reindex", parents=[as_user], help="rebuild chunks and vectors after a change of embedding model or chunking"
    )
    p.add_argument("--force", action="store_true", help="rebuild even when the index matches the settings")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_reindex)


def cmd_reindex(args: argparse.Namespace) -> int:
    session = session_for(args)
    problems = session.index_problems()
    lost = [r for r in session.documents() if r.missing_chunks]
    if lost:
        problems.append(f"the vector store lost chunks of {', '.join(r.source for r in lost)}")
    if not problems and not args.force:
        print("The index already matches the current settings; nothing to do (--force rebuilds anyway).")
        return 0
    if problems:
        print("Rebuilding the index: " + "; ".join(problems), file=sys.stderr)
    live = sys.stderr.isatty()
    results = session.reindex(progress=lambda update: _progress_line("reindex", update) if live else None)
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:
        print_json([r.model_dump(exclude={"seconds"}) for r in results])
    else:
        for r in results:
            detail = r.error if r.status == "failed" else f"{r.chunks} chunks"
            print(f"{r.status:9} {r.source}: {detail}")
    return 1 if any(r.status == "failed" for r in results) else 0


def add_resume(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "resume", parents=[as_user], help="finish embedding documents an interrupted ingest left keyword-only"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_resume)


def cmd_resume(args: argparse.Namespace) -> int:
    """Finish the semantic index of documents an interrupted ingest (a kill, a crash) left searchable
    by keyword only; `docs` lists them with their share embedded."""
    session = session_for(args)
    live = sys.stderr.isatty()
    notice = _WaitNotice()
    results = session.resume(
        progress=(lambda update: _progress_line("resume", update)) if live else (lambda u: notice("resume", u))
    )
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:
        print_json([r.model_dump() for r in results])
    elif not results:
        print("Nothing to finish: every document is fully indexed.")
    else:
        for r in results:
            detail = r.error if r.status in ("failed", "cancelled") else f"{r.chunks} chunks, semantic index complete"
            print(f"{r.status:9} {r.source}: {detail}")
    return 1 if any(r.status != "indexed" for r in results) else 0


def add_redactions(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("redactions", parents=[as_user], help="the redaction report of a document")
    p.add_argument("source")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_redactions)


def cmd_redactions(args: argparse.Namespace) -> int:
    session = session_for(args)
    if not any(d.source == args.source for d in session.documents()):
        print(f"no document named {args.source!r}", file=sys.stderr)
        return 1
    report = session.redactions(args.source)
    if args.json:
        print_json([r.model_dump() for r in report])
    elif not report:
        print(f"{args.source}: nothing was redacted")
    else:
        for r in report:
            where = f"p. {r.page}" if r.page else "text"
            print(f"{where}\t{r.kind}\t{r.placeholder}\t{r.preview}")
    return 0


def add_docs(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("docs", parents=[as_user], help="list indexed documents")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)


def cmd_docs(args: argparse.Namespace) -> int:
    session = session_for(args)
    try:
        session.open_index()  # recovery; marks documents whose chunks the vector store lost
    except VectorStoreUnavailable as exc:  # the registry is local: list it anyway
        print(f"ragchat: could not check the documents against the vector store: {exc}", file=sys.stderr)
    except WriterBusy as exc:  # an ingest elsewhere: list what was complete, change nothing
        print(f"ragchat: {exc}; listing the documents complete so far", file=sys.stderr)
    records = session.documents()
    if args.json:
        print_json([r.model_dump(mode="json") for r in records])
    elif not records:
        print("No documents indexed yet.")
    else:
        for r in records:
            pages = f"{r.pages} pages\t" if r.pages is not None else ""
            print(f"{r.source}\t{r.file_type}\t{pages}{r.chunks} chunks")
            if card := session.document_card(r):
                print(f"  about: {card}")
            for warning in r.warnings:
                print(f"  note: {warning}")
            if r.missing_chunks:
                print(f"  missing: {r.missing_note()}")
            if r.pending_chunks:
                print(f"  {r.embedding_note()}; if no ingest is running, `ragchat resume` finishes it")
    return 0


def add_delete(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("delete", parents=[as_user], help="remove a document from the index")
    p.add_argument("source")
    p.set_defaults(func=cmd_delete)


def cmd_delete(args: argparse.Namespace) -> int:
    removed = session_for(args).delete(args.source)
    print(f"deleted {args.source}" if removed else f"no document named {args.source!r}")
    return 0 if removed else 1
