"""`python -m tests.kill_point_child POINT MARKER_FILE ragchat-args…`: run the real `ragchat` CLI in
this process, but stop dead at one named point of an ingest: the point is reached, MARKER_FILE is
written, and the process sleeps until the test kills it with SIGKILL. Nothing else is changed.

The points, in the order an ingest passes them:
- parsing: the third page is being chunked (the version is journalled);
- bm25-write: every page is read and its chunks stored to embed; the new BM25 segment and its mask
  are on disk, the manifest not yet switched to them;
- embedding: the second batch is being embedded (BM25 holds the new version, the first batch is in
  Chroma);
- version-switch: inside the registry transaction that makes the new version live, before it commits;
- removing-replaced: the new version is live and Chroma dropped the old one; BM25 still holds it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

POINTS = ("parsing", "bm25-write", "embedding", "version-switch", "removing-replaced")


def _stop_here(marker: Path) -> None:
    marker.write_text(str(os.getpid()), encoding="utf-8")
    while True:
        time.sleep(60)


def arm(point: str, marker: Path) -> None:
    """Patch the one function at `point` so that reaching it stops the process."""
    if point == "parsing":
        import ingestion.indexer as indexer

        chunk_page = indexer.chunk_page

        def chunking(owner: Any, page: Any, *args: Any) -> Any:
            if page.number == 3:
                _stop_here(marker)
            return chunk_page(owner, page, *args)

        indexer.chunk_page = chunking
    elif point == "embedding":
        import threading

        from ingestion.indexer import Indexer
        from providers.embedder import Embedder

        embed, store_batch, calls, first_stored = Embedder.embed, Indexer._store_batch, [], threading.Event()

        def storing(self: Any, *args: Any) -> None:
            store_batch(self, *args)
            first_stored.set()

        def embedding(self: Any, texts: list[str]) -> Any:
            calls.append(len(texts))
            if len(calls) == 2:
                # The writer thread stores the first batch while this one embeds: wait until it has.
                first_stored.wait(timeout=120)
                _stop_here(marker)
            return embed(self, texts)

        Indexer._store_batch = storing  # type: ignore[method-assign]
        Embedder.embed = embedding  # type: ignore[method-assign]
    elif point == "bm25-write":
        replace = os.replace

        def replacing(src: Any, dst: Any) -> None:
            if Path(dst).name == "manifest.json":
                _stop_here(marker)
            replace(src, dst)

        os.replace = replacing
    elif point == "version-switch":
        import ingestion.registry as registry

        def putting(conn: Any, record: Any) -> None:
            _stop_here(marker)

        registry._put = putting
    elif point == "removing-replaced":
        from ingestion.bm25_index import BM25Index

        delete = BM25Index.delete_document

        def deleting(self: Any, doc_id: str, keep_hash: str | None = None, only_hash: str | None = None) -> int:
            if keep_hash is not None:
                _stop_here(marker)
            return delete(self, doc_id, keep_hash=keep_hash, only_hash=only_hash)

        BM25Index.delete_document = deleting  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown kill point {point!r}; one of {', '.join(POINTS)}")


if __name__ == "__main__":
    arm(sys.argv[1], Path(sys.argv[2]))
    from ragchat.cli import main

    raise SystemExit(main(sys.argv[3:]))
