"""The vector store port and its Chroma adapter (embedded PersistentClient, or a server when
RAGCHAT_CHROMA_HOST is set). Embeddings are always passed in: the collection has no embedding
function, because Chroma's default one downloads a model.

Chroma holds a chunk's vector and the two ids it filters on (document, version), not its text: the
text and the rest of its metadata are read from `chunk_texts` (the registry). The text and metadata
cost Chroma two thirds of its write CPU (a full-text index we never query), and the embedder waits for it.
Chunks written by earlier releases still carry their text in Chroma and are read from it.

In server mode every call that fails on the way (server down, connection lost, timeout, collection
deleted under us) raises `VectorStoreUnavailable` with one sentence to show, never a raw httpx error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from core.schemas import Chunk
from core.settings import Settings
from providers.chroma_server import (
    auth_headers,
    check_status,
    collection_gone,
    probe,
    store_label,
    timeout,
    unreachable,
)
from providers.chroma_views import view_of

log = logging.getLogger(__name__)

ChunkTexts = Callable[[list[str]], dict[str, Chunk]]


class ChromaStore:
    def __init__(self, settings: Settings, chunk_texts: ChunkTexts) -> None:
        """`chunk_texts`: the chunks (text and metadata) of these ids, as the registry stores them."""
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        self._server: Settings | None = settings if settings.chroma_host else None
        if settings.chroma_host:
            probe(settings)
            with self._answering():
                self._client = chromadb.HttpClient(
                    host=settings.chroma_host,
                    port=settings.chroma_port,
                    ssl=settings.chroma_ssl,
                    headers=auth_headers(settings),
                    settings=chroma_settings,
                )
            _tune_session(self._client, settings)
        else:
            settings.chroma_path.mkdir(parents=True, exist_ok=True)
            self._view = view_of(settings.chroma_path)
            self._chroma_settings = chroma_settings
            self._path = str(settings.chroma_path)  # also chromadb's key for the path's System
            with self._view.lock:
                self._client = chromadb.PersistentClient(path=self._path, settings=chroma_settings)
                self._view.first_open()
                self._generation = self._view.generation
        self.label = store_label(settings)
        self._name = settings.collection
        self._chunk_texts = chunk_texts
        with self._answering(writing=True):  # it creates the collection in a new home
            self._collection = self._open()

    @contextmanager
    def _answering(self, writing: bool = False) -> Iterator[None]:
        """Embedded: first take in what another process wrote (providers/chroma_views.py).
        Server mode: transport failures and a vanished collection become VectorStoreUnavailable
        (a refused token and gateway errors already raise it, from the session's response hook)."""
        if self._server is None:
            with self._view.lock:
                if self._view.catch_up(self._path) != self._generation:
                    self._reconnect()
                yield
                if writing:
                    self._view.wrote()
            return
        import httpx
        from chromadb.errors import NotFoundError

        try:
            yield
        except httpx.TransportError as exc:
            raise unreachable(self._server, exc) from exc
        except NotFoundError as exc:
            raise collection_gone(self._server) from exc

    def _reconnect(self) -> None:
        """Embedded: a client and collection on the path's current System."""
        import chromadb

        self._client = chromadb.PersistentClient(path=self._path, settings=self._chroma_settings)
        self._generation = self._view.generation
        if hasattr(self, "_collection"):  # not while the constructor opens it
            self._collection = self._open()

    def _open(self) -> Any:
        return self._client.get_or_create_collection(
            self._name, embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    def check(self) -> None:
        """Raise VectorStoreUnavailable unless the store answers (before a change that must not half-happen)."""
        with self._answering():
            self._client.heartbeat()

    def reset(self) -> None:
        """Drop every chunk (a rebuild with another embedding model may change the dimension)."""
        from chromadb.errors import NotFoundError

        with self._answering(writing=True):
            with suppress(NotFoundError):  # already gone (deleted on the server): a rebuild starts from nothing
                self._client.delete_collection(self._name)
            self._collection = self._open()

    def add(self, chunks: list[Chunk], embeddings: list[list[float]]) -> None:
        if not chunks:
            return
        with self._answering(writing=True):
            self._collection.upsert(
                ids=[c.chunk_id for c in chunks],
                embeddings=embeddings,
                metadatas=[{"doc_id": c.doc_id, "content_hash": c.content_hash} for c in chunks],
            )

    def delete_document(self, doc_id: str, keep_hash: str | None = None) -> None:
        """Delete a document's chunks; with keep_hash, only those of other versions."""
        where: dict[str, Any] = {"doc_id": doc_id}
        if keep_hash is not None:
            where = {"$and": [where, {"content_hash": {"$ne": keep_hash}}]}
        with self._answering(writing=True):
            self._collection.delete(where=where)

    def delete_version(self, doc_id: str, content_hash: str) -> None:
        """Delete the chunks of one version of a document (an unfinished or replaced one)."""
        with self._answering(writing=True):
            self._collection.delete(where={"$and": [{"doc_id": doc_id}, {"content_hash": content_hash}]})

    def count_version(self, doc_id: str, content_hash: str) -> int:
        with self._answering():
            result = self._collection.get(
                where={"$and": [{"doc_id": doc_id}, {"content_hash": content_hash}]}, include=[]
            )
        return len(result["ids"])

    def count(self) -> int:
        with self._answering():
            return int(self._collection.count())

    def query(
        self, embedding: list[float], k: int, doc_ids: Collection[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        """Nearest chunks with their cosine similarity (1 - cosine distance), best first; only those
        of `doc_ids` when given. (An empty collection answers with no rows; asking count() first cost a
        round trip per search.)"""
        where: dict[str, Any] | None = {"doc_id": {"$in": sorted(doc_ids)}} if doc_ids is not None else None
        with self._answering():
            result = self._collection.query(
                query_embeddings=[embedding],
                n_results=k,
                where=where,
                include=["documents", "metadatas", "distances"],
            )
        ids, distances = result["ids"][0], result["distances"][0]
        found = self._chunks(ids, result["documents"][0], result["metadatas"][0])
        return [(found[cid], 1.0 - dist) for cid, dist in zip(ids, distances, strict=True) if cid in found]

    def get(self, chunk_ids: list[str]) -> dict[str, tuple[Chunk, list[float]]]:
        """Chunks by id, with their stored embeddings (to score BM25-only hits by cosine too)."""
        if not chunk_ids:
            return {}
        with self._answering():
            result = self._collection.get(ids=chunk_ids, include=["documents", "metadatas", "embeddings"])
        found = self._chunks(result["ids"], result["documents"], result["metadatas"])
        vectors = zip(result["ids"], result["embeddings"], strict=True)
        return {cid: (found[cid], list(vector)) for cid, vector in vectors if cid in found}

    def version_chunks(self, doc_id: str, content_hash: str) -> list[tuple[Chunk, list[float]]]:
        """Every stored chunk of one version of a document, with its embedding (any order)."""
        with self._answering():
            result = self._collection.get(
                where={"$and": [{"doc_id": doc_id}, {"content_hash": content_hash}]},
                include=["documents", "metadatas", "embeddings"],
            )
        found = self._chunks(result["ids"], result["documents"], result["metadatas"])
        vectors = zip(result["ids"], result["embeddings"], strict=True)
        return [(found[cid], list(vector)) for cid, vector in vectors if cid in found]

    def iter_chunks(self, batch: int = 2000) -> Iterator[list[Chunk]]:
        """Every stored chunk, a batch at a time (to rebuild the BM25 index after it was lost)."""
        for offset in range(0, self.count(), batch):
            with self._answering():
                result = self._collection.get(offset=offset, limit=batch, include=["documents", "metadatas"])
            yield list(self._chunks(result["ids"], result["documents"], result["metadatas"]).values())

    def _chunks(self, ids: list[str], documents: list[str | None], metadatas: list[Any]) -> dict[str, Chunk]:
        """Chunks by id, in the order given: text and metadata from the registry, or from Chroma for
        a chunk an earlier release stored there. A chunk with neither (another registry's, on a
        shared Chroma server) is left out."""
        rows = zip(ids, documents, metadatas, strict=True)
        legacy = {cid: _from_metadata(cid, text, meta) for cid, text, meta in rows if text is not None}
        texts = self._chunk_texts([cid for cid in ids if cid not in legacy])
        return {cid: chunk for cid in ids if (chunk := legacy.get(cid) or texts.get(cid)) is not None}


def _tune_session(client: Any, settings: Settings) -> None:
    """chromadb's HTTP client waits forever (its httpx session has no timeout, and no setting sets
    one), so a hung server would hang a search: give its session RAGCHAT_CHROMA_TIMEOUT_S. And have
    a refused token or a proxy's gateway error raise its sentence instead of the proxy's error page."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if not isinstance(session, httpx.Client):
        log.warning("chromadb's HTTP client changed: its requests have no timeout and a proxy's errors no sentence")
        return
    session.timeout = timeout(settings)
    session.event_hooks["response"].append(lambda response: check_status(settings, response.status_code))


def _from_metadata(chunk_id: str, text: str, meta: dict[str, Any]) -> Chunk:
    """A chunk as an earlier release stored it in Chroma: its text as the document, its fields as metadata."""
    heading = str(meta.get("heading_path") or "")
    return Chunk(
        chunk_id=chunk_id,
        doc_id=meta["doc_id"],
        content_hash=meta["content_hash"],
        source=meta["source"],
        file_type=meta["file_type"],
        page=meta["page"],
        chunk_index=meta["chunk_index"],
        text=text,
        char_start=meta["char_start"],
        char_end=meta["char_end"],
        heading_path=heading.split("\x1f") if heading else [],
        kind=meta.get("kind", "text"),
        line_start=meta.get("line_start"),
        line_end=meta.get("line_end"),
        lang=meta.get("lang", "en"),  # chunks indexed before languages were detected are English
    )
