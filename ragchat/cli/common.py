"""What the commands share: the Session they act on, JSON output, the notice of a fallback model, and
the options that more than one command takes (retrieval, strictness)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TypedDict

from core.settings import get_settings

if TYPE_CHECKING:
    from ragchat.session import Session

    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]


def session_for(args: argparse.Namespace | None = None) -> Session:
    """The Session of `--user` (else RAGCHAT_USER, else the default user) in a new App."""
    from ragchat.application import open_session

    settings = get_settings()
    user = getattr(args, "user", None) or settings.user
    return open_session(settings, user=user)


def print_json(payload: object) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def say_fallback(session: Session) -> None:
    """One line on stderr when another model answers than the configured one (not installed)."""
    if fallback := session.app.llm_choice().fallback:
        print(f"ragchat: {fallback}", file=sys.stderr)


def add_retrieval_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bm25-weight", type=float, default=None, help="share of BM25 in fusion, 0 (dense only) to 1 (BM25 only)"
    )
    parser.add_argument("--no-rerank", action="store_true", help="skip the cross-encoder for this query")


class RetrievalFlags(TypedDict):
    bm25_weight: float | None
    rerank: bool


def retrieval_flags(args: argparse.Namespace) -> RetrievalFlags:
    return {"bm25_weight": args.bm25_weight, "rerank": not args.no_rerank}


def add_strictness_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strictness",
        choices=["lenient", "balanced", "strict"],
        default=None,
        help="how readily an answer the documents may not state is withheld (default RAGCHAT_STRICTNESS)",
    )
