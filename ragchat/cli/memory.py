"""`ragchat memory`: review, forget or undo what ragchat remembers about the user and their company."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ragchat.cli.common import print_json, session_for

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands


def add_memory(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("memory", parents=[as_user], help="review what ragchat remembers about you and your company")
    p.add_argument("--forget", metavar="ENTRY", help="delete this entry (its exact text)")
    p.add_argument("--undo", action="store_true", help="take back what the last turn that wrote to memory wrote")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_memory)


def cmd_memory(args: argparse.Namespace) -> int:
    """Review USER_MEMORY.md / COMPANY_MEMORY.md, what the last turn wrote; delete an entry or undo
    the last turn's writes."""
    memory = session_for(args).memory
    if args.forget:
        removed = memory.forget(args.forget)
        print(f"forgot: {args.forget}" if removed else f"no memory entry {args.forget!r}")
        return 0 if removed else 1
    if args.undo:
        undo = memory.undo_last_turn()
        for event in undo.undone:
            print(f"put back: {event.replaced}" if event.replaced else f"removed: {event.summary}")
        for event in undo.not_found:
            print(f"not found (edited or deleted since): {event.summary}", file=sys.stderr)
        if not undo.undone and not undo.not_found:
            print("nothing to undo")
        return 0 if undo.undone or not undo.not_found else 1
    facts = memory.facts()
    last = memory.last_turn()
    if args.json:
        print_json(
            {
                "USER": facts.user,
                "COMPANY": facts.company,
                "files": {target: str(file.path) for target, file in memory.files.items()},
                "last_turn": [event.model_dump(mode="json") for event in last],
            }
        )
        return 0
    for target, entries in (("USER", facts.user), ("COMPANY", facts.company)):
        print(f"{memory.files[target].path.name}:")
        print("\n".join(f"  - {e}" for e in entries) or "  (empty)")
    if last:
        print("\nThe last turn that wrote to memory:")
        for event in last:
            print(f"  {event.action} in {event.target}: {event.summary} (confidence {event.confidence:.2f})")
    return 0
