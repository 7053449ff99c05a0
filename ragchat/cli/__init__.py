"""The `ragchat` command line: the same pipeline as the app, for scripts and evaluation.

`program.py` assembles the parser and runs a command (`main`). Each command's options sit beside the
function that runs it, one module per command or group of related commands: `documents.py` (ingest,
reindex, resume, redactions, docs, delete), `search.py`, `ask.py`, `history.py` (logs, history),
`memory.py`, `weather.py`, `evaluate.py` (eval, sanity), `app.py` (models, ui); `common.py` holds
what they share."""

from ragchat.cli.program import build_parser, main

__all__ = ["build_parser", "main"]
