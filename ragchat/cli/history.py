"""What was asked before: the query log (`ragchat logs`) and the stored conversations (`ragchat history`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ragchat.cli.common import print_json, session_for

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands


def add_logs(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("logs", parents=[as_user], help="the query log, newest first (masked)")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0, help="skip this many newer entries (paging)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_logs)


def cmd_logs(args: argparse.Namespace) -> int:
    """The query log, newest first (every text field was masked before it was written)."""
    log = session_for(args).query_log
    entries = log.entries(limit=args.limit, offset=args.offset)
    if args.json:
        print_json([e.model_dump(mode="json") for e in entries])
        return 0
    if not entries:
        print("The query log is empty.")
        return 0
    for e in entries:
        outcome = f"stopped: {e.guardrail}" if e.guardrail else ("refused" if e.refused else "answered")
        score = f"confidence {e.confidence:.2f}" if e.confidence is not None else "confidence –"
        total = e.timings_ms.get("total_ms", 0.0) / 1000
        print(f"#{e.id} {e.at:%Y-%m-%d %H:%M:%S} {outcome:20} {score:16} {total:6.1f} s  {_shorten(e.question, 70)}")
    print(f"({len(entries)} of {log.count()} entries)", file=sys.stderr)
    return 0


def add_history(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("history", parents=[as_user], help="stored conversations: list, export as Markdown, delete")
    p.add_argument("action", choices=["list", "export", "delete"])
    p.add_argument("session", nargs="?", help="the conversation's id (export, delete)")
    p.add_argument("-o", "--output", help="export: write the Markdown to this file instead of stdout")
    p.add_argument("--limit", type=int, default=50, help="list: most recent conversations shown")
    p.add_argument("--json", action="store_true", help="list: as JSON")
    p.set_defaults(func=cmd_history)


def cmd_history(args: argparse.Namespace) -> int:
    """Stored conversations: list them, export one as Markdown with its citations, or delete one."""
    session = session_for(args)
    if args.action == "list":
        sessions = session.conversations.sessions(limit=args.limit)
        if args.json:
            print_json([s.model_dump(mode="json") for s in sessions])
            return 0
        for s in sessions:
            print(f"{s.session_id}\t{s.updated_at:%Y-%m-%d %H:%M}\t{s.turns} turns\t{_shorten(s.title, 60)}")
        if not sessions:
            print("No conversations yet.")
        return 0
    if not args.session:
        print(f"history {args.action} needs a SESSION id (see `ragchat history list`)", file=sys.stderr)
        return 2
    if args.action == "delete":
        removed = session.conversations.delete(args.session)
        print(f"deleted conversation {args.session}" if removed else f"no conversation {args.session!r}")
        return 0 if removed else 1
    markdown = session.export_conversation(args.session)
    if markdown is None:
        print(f"no conversation {args.session!r}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(markdown, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(markdown, end="")
    return 0


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
