"""`ragchat ask`: a cited answer from the indexed documents, streamed to the terminal."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from core.schemas import Hit
from rag.conversation_export import LOW_CONFIDENCE_NOTE
from ragchat.cli.common import (
    add_retrieval_flags,
    add_strictness_flag,
    print_json,
    retrieval_flags,
    say_fallback,
    session_for,
)

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands


def add_ask(sub: Subcommands, as_user: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ask", parents=[as_user], help="a cited answer from the indexed documents")
    p.add_argument("question")
    p.add_argument("--session", help="continue (or start) the conversation with this id")
    p.add_argument("-k", type=int, default=None, help="passages given to the model (default RAGCHAT_TOP_K)")
    p.add_argument(
        "--doc",
        action="append",
        metavar="NAME",
        help="answer from this document only (repeat for several); without it, a request about whole documents "
        "is about the one named in the question, or the only one, and a question searches them all",
    )
    p.add_argument(
        "--thorough",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="read every section of a long document before an overview of it (slow), or not: passages chosen "
        "across it (default RAGCHAT_DOCUMENT_READING)",
    )
    add_retrieval_flags(p)
    add_strictness_flag(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)


def cmd_ask(args: argparse.Namespace) -> int:
    """Exit 0 with an answer (or the refusal), 1 when the model failed, 2 when a guardrail stopped the
    question (too long, an injection pattern, the session's rate limit)."""
    from rag.pipeline import AskOptions

    session = session_for(args)
    say_fallback(session)
    options = AskOptions(
        session_id=args.session,
        top_k=args.k,
        on_queued=_QueueNotice(),
        strictness=args.strictness,
        documents=tuple(args.doc or ()),
        thorough=args.thorough,
        on_progress=_section_progress if sys.stderr.isatty() and not args.json else None,
        on_section=_section_lines if sys.stderr.isatty() and not args.json else None,
        **retrieval_flags(args),
    )
    stream = session.ask_stream(args.question, options)
    if args.json:
        answer = stream.finish()
        print_json(answer.model_dump(mode="json"))
    else:
        raw = ""
        for token in stream.tokens():
            raw += token
            print(token, end="", flush=True)
        answer = stream.result()
        print()
        if answer.withheld:
            print(f"\nWithheld, as the documents do not state it: {answer.answer}")
        elif answer.answer.strip() != raw.strip():
            print(f"\nChecked answer (citations validated): {answer.answer}")
        if answer.incomplete:
            print(f"\nThe model stopped before finishing: {answer.error}", file=sys.stderr)
        elif answer.error:
            print(f"\nThe model stopped early: {answer.error}", file=sys.stderr)
        for c in answer.citations:
            print(f"[{c.marker}] {c.source} · {c.locator}\n    “{c.snippet}”")
        for sentence in answer.unsupported_sentences:
            print(f"Not supported by its sources: {sentence}")
        if answer.low_confidence:
            print(LOW_CONFIDENCE_NOTE)
        if answer.search_query != answer.question:
            print(f"\n(searched for: {answer.search_query})", file=sys.stderr)
        for partial in answer.still_embedding:
            print(f"({partial.describe()})", file=sys.stderr)
        if answer.document_request and answer.document_request.documents:
            request = answer.document_request
            print(f"\n(about {', '.join(request.documents)}: {request.describe()})", file=sys.stderr)
        if stream.needs_memory:
            answer = stream.finish()
            if answer.memory_note:
                print(f"\n{answer.memory_note}")
        score = f"confidence {answer.confidence:.2f}; " if answer.confidence is not None else ""
        print(
            f"({score}{answer.timings_ms.get('total_ms', 0) / 1000:.1f} s; model: {answer.models.llm}; "
            f"reranker: {answer.models.reranker})",
            file=sys.stderr,
        )
    if answer.guardrail is not None:
        return 2
    return 1 if answer.error else 0


class _QueueNotice:
    """Tells the person on stderr while their question waits for the busy model (once per change)."""

    def __init__(self) -> None:
        self._told: int | None = None

    def __call__(self, ahead: int) -> None:
        if ahead == self._told:
            return
        self._told = ahead
        if ahead:
            print(f"Queued: {ahead} question{'s' if ahead != 1 else ''} ahead of yours…", file=sys.stderr)
        else:
            print("The model is answering yours now.", file=sys.stderr)


def _section_progress(what: str, done: int, total: int) -> None:
    """A request about a long document: its sections being summarised, on one line of stderr."""
    end = "\n" if done == total else ""
    print(f"\r\033[K{what}: {done}/{total}", end=end, file=sys.stderr, flush=True)


def _section_lines(sentences: list[Hit]) -> None:
    """A long document's section summaries, on stderr as each is written (the answer follows on stdout)."""
    from rag.document_stages import section_text

    where, text = section_text(sentences)
    print(f"\r\033[K[{where}] {text}", file=sys.stderr, flush=True)
