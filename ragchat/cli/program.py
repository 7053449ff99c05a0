"""The program: the parser, assembled from the commands' own modules (each adds its subcommand beside
the function that runs it), `main` (one command, its errors as one line) and the log file it writes to.

Named `program`, not `main`: `ragchat.cli.main` is the function the console script calls."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

from core.settings import get_settings
from core.users import InvalidUserName
from ingestion.errors import IndexOutOfDate
from providers.chroma_server import VectorStoreUnavailable
from providers.llm.base import LLMError
from providers.packaged_models import ModelNotInstalled
from rag.conversations import ForeignSession
from ragchat.cli import app, ask, documents, evaluate, history, memory, search, weather

DESCRIPTION = "The `ragchat` command line: the same pipeline as the app, for scripts and evaluation."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragchat", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    # The commands that read or write one user's data (memory, conversations, logs, per-user documents).
    as_user = argparse.ArgumentParser(add_help=False)
    as_user.add_argument(
        "--user", help="act for this user (default: RAGCHAT_USER, else the default user of a single-user install)"
    )
    # In the order `ragchat --help` lists them.
    documents.add_ingest(sub, as_user)
    documents.add_reindex(sub, as_user)
    documents.add_resume(sub, as_user)
    documents.add_redactions(sub, as_user)
    search.add_search(sub, as_user)
    ask.add_ask(sub, as_user)
    history.add_logs(sub, as_user)
    history.add_history(sub, as_user)
    documents.add_docs(sub, as_user)
    documents.add_delete(sub, as_user)
    memory.add_memory(sub, as_user)
    app.add_models(sub)
    weather.add_weather(sub)
    evaluate.add_eval(sub)
    evaluate.add_sanity(sub)
    app.add_ui(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Errors reach the terminal as one line saying what to do. Warnings and the traceback of an
    unexpected error go to the log file under RAGCHAT_HOME (logs/ragchat.log), which the line names."""
    args = build_parser().parse_args(argv)
    log_path, handler = _file_logging()
    # What a write recovered after a crash is news for the person too, not only for the log.
    recovery = logging.StreamHandler(sys.stderr)
    recovery.setLevel(logging.WARNING)
    logging.getLogger("ragchat.document_index").addHandler(recovery)
    try:
        return int(args.func(args))
    except (IndexOutOfDate, VectorStoreUnavailable, ModelNotInstalled, LLMError) as exc:
        print(f"ragchat: {exc}", file=sys.stderr)
        return 1
    except (InvalidUserName, ForeignSession) as exc:
        print(f"ragchat: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted; a file being indexed was rolled back.", file=sys.stderr)
        return 130
    except Exception as exc:
        logging.getLogger("ragchat.cli").error("ragchat %s failed", " ".join(sys.argv[1:]), exc_info=exc)
        lines = str(exc).strip().splitlines()
        what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        print(f"ragchat: {what} (details in {log_path})", file=sys.stderr)
        return 1
    finally:
        logging.getLogger("ragchat.document_index").removeHandler(recovery)
        logging.getLogger().removeHandler(handler)
        handler.close()


def _file_logging() -> tuple[Path, logging.Handler]:
    """Log warnings and errors of this command to the home's log file (created on the first record),
    never to the terminal; the temp dir's when even the settings cannot be read."""
    try:
        path = get_settings().log_path
        path.parent.mkdir(parents=True, exist_ok=True)
    except Exception:
        path = Path(tempfile.gettempdir()) / "ragchat.log"
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    return path, handler
