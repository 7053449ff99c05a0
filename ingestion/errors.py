"""Exceptions of the ingestion side that callers handle (kept light: the CLI imports this module
for every command)."""


class IngestCancelled(Exception):
    """The user asked to stop; the index is left as it was."""


class IndexOutOfDate(RuntimeError):
    """The stored vectors were made with other settings than the current ones; rebuild first."""
