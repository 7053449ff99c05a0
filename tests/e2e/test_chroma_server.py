"""Server mode for real: `chroma run` from the installed chromadb package on 127.0.0.1, reached through
Session with RAGCHAT_CHROMA_HOST/PORT. Ingest, search, delete, an outage (between calls and in the
middle of an ingest), a restart on the same data, a server that lost chunks, a token-checking proxy in
front of the server, and a server that is not there at all.

One server per module (it starts in about a second); each test has its own collection and home.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import chromadb
import httpx
import pytest
import streamlit as st
from chromadb.config import Settings as ChromaSettings
from streamlit.testing.v1 import AppTest

from core.schemas import IngestProgress, doc_id_for
from core.settings import PROJECT_ROOT, get_settings
from ingestion.parsers import version_hash
from providers.chroma_server import VectorStoreUnavailable
from ragchat.application import open_session
from ragchat.cli import main
from tests.chroma_process import ChromaServer, free_port
from tests.e2e.test_ingest_consistency import ALPHA, BETA, assert_consistent, sources
from tests.fixtures import long_pdf_bytes

TOKEN = "s3cret-t0ken"


def test_ingest_search_delete_outage_and_restart(server_mode: ChromaServer) -> None:
    session = open_session(get_settings())
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    assert session.ingest_bytes("b.txt", BETA.encode()).status == "indexed"
    collection = session.settings.collection
    assert session.models().vector_store == f"chroma server {server_mode.url} (collection {collection})"
    top = session.search("zebra crossing near the harbour").hits[0]
    assert top.chunk.source == "a.txt" and top.scores.dense is not None  # the server answered the dense part
    assert sources(session, "quokka enclosure") == {"b.txt"}
    assert_consistent(session)
    assert session.delete("b.txt")
    assert sources(session, "quokka enclosure") == set()

    server_mode.stop()
    unreachable = f"Chroma server at {server_mode.url} is not reachable: connection refused; start it with `chroma run"
    with pytest.raises(VectorStoreUnavailable, match="is not reachable") as search_error:
        session.search("zebra crossing")
    assert str(search_error.value).startswith(unreachable)
    assert str(search_error.value).endswith("or unset RAGCHAT_CHROMA_HOST")
    failed = session.ingest_bytes("c.txt", b"The walrus colony moved to the northern beach.")
    assert failed.status == "failed" and (failed.error or "").startswith(unreachable)
    with pytest.raises(VectorStoreUnavailable, match="is not reachable"):
        session.delete("a.txt")  # refused before anything changed
    assert [d.source for d in session.documents()] == ["a.txt"]
    assert session.document_index.registry.unfinished(include_running=True) == []

    server_mode.start()  # same data path, same port
    assert sources(session, "zebra crossing") == {"a.txt"}  # the same client carries on
    assert sources(session, "quokka enclosure") == set()
    restarted = open_session(get_settings())  # and a fresh start against the restarted server
    assert sources(restarted, "zebra crossing") == {"a.txt"}
    assert sources(restarted, "quokka enclosure") == set()
    assert assert_consistent(restarted) == {"a.txt": 1}


def test_the_server_going_away_mid_ingest_leaves_a_recoverable_state(server_mode: ChromaServer) -> None:
    session = open_session(get_settings(ingest_batch=16))
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    keyword_ids = session.document_index.bm25.live_ids()
    book = long_pdf_bytes(20, seed=4, marker="kilroy")
    leftover = (doc_id_for("book.pdf"), version_hash(book, False))
    embedding_steps = 0

    def stop_after_the_first_batch(update: IngestProgress) -> None:
        nonlocal embedding_steps
        if update.stage.startswith("embedding"):
            embedding_steps += 1
            if embedding_steps == 2:  # the second batch begins to embed; the writer thread stores the first
                deadline = time.monotonic() + 60
                while session.document_index.store.count_version(*leftover) < 16 and time.monotonic() < deadline:
                    time.sleep(0.05)
                server_mode.stop()

    result = session.ingest_bytes("book.pdf", book, stop_after_the_first_batch)
    assert embedding_steps >= 2
    assert result.status == "failed" and "is not reachable" in (result.error or "")
    assert [d.source for d in session.documents()] == ["a.txt"]
    assert session.document_index.bm25.live_ids() == keyword_ids, "the failed document left BM25 at once"
    assert session.document_index.registry.unfinished() == [leftover], "journalled, and handed to recover"

    server_mode.start()
    assert session.document_index.store.count_version(*leftover) >= 16, "the first batch is on the server…"
    assert sources(session, "kilroy") == set(), "…but no longer searchable"
    again = session.ingest_bytes("book.pdf", book)  # recover runs first, then the file is indexed
    assert again.status == "indexed"
    assert sources(session, "kilroy") == {"book.pdf"}
    assert assert_consistent(session) == {"a.txt": 1, "book.pdf": again.chunks}


def test_a_server_that_lost_chunks_is_reconciled_at_start_up(
    server_mode: ChromaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    session = open_session(get_settings())
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    assert session.ingest_bytes("b.txt", BETA.encode()).status == "indexed"
    # What a restore from an older backup (or another app) does behind our back: b.txt's chunks vanish.
    other = chromadb.HttpClient(
        host="127.0.0.1", port=server_mode.port, settings=ChromaSettings(anonymized_telemetry=False)
    )
    other.get_collection(session.settings.collection).delete(where={"doc_id": doc_id_for("b.txt")})

    restarted = open_session(get_settings())
    restarted.open_index()
    assert len(restarted.document_index.bm25) == restarted.document_index.store.count() == 1, (
        "BM25 rebuilt from the server's chunks"
    )
    docs = {d.source: d for d in restarted.documents()}
    assert (docs["a.txt"].missing_chunks, docs["b.txt"].missing_chunks) == (0, 1)
    assert sources(restarted, "quokka enclosure") == set()

    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    assert "missing: 1 of its 1 chunks are gone from the vector store" in listing
    assert "ragchat reindex" in listing

    st.cache_resource.clear()  # the app says so too, and offers the rebuild
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    notices = [w.value for w in at.sidebar.warning]
    assert any("lost chunks of b.txt" in n and "Rebuilding re-reads the stored page texts" in n for n in notices)
    assert any(b.label == "Rebuild index" for b in at.sidebar.button)
    assert any("1 of its 1 chunks are gone from the vector store" in c.value for c in at.sidebar.caption)
    st.cache_resource.clear()

    rebuilt = restarted.reindex()  # from the page texts the registry kept
    assert sorted((r.source, r.status) for r in rebuilt) == [("a.txt", "indexed"), ("b.txt", "indexed")]
    assert [d.missing_chunks for d in restarted.documents()] == [0, 0]
    assert sources(restarted, "quokka enclosure") == {"b.txt"}
    assert_consistent(restarted)

    # A wiped server: every document is marked, and uploading a file again restores it.
    other.delete_collection(session.settings.collection)
    wiped = open_session(get_settings())
    wiped.open_index()
    assert [d.missing_chunks for d in wiped.documents()] == [1, 1]
    assert wiped.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed", "not 'unchanged'"
    assert sources(wiped, "zebra crossing") == {"a.txt"}
    assert {d.source: d.missing_chunks for d in wiped.documents()} == {"a.txt": 0, "b.txt": 1}

    # The app that was running when its collection was deleted says so, and its rebuild still works.
    with pytest.raises(VectorStoreUnavailable, match=r"^The collection '.+' is gone from the Chroma server at "):
        restarted.search("zebra crossing")
    assert [r.status for r in restarted.reindex()] == ["indexed", "indexed"]
    assert sources(restarted, "quokka enclosure") == {"b.txt"}
    assert assert_consistent(restarted) == {"a.txt": 1, "b.txt": 1}


class _TokenProxy(ThreadingHTTPServer):
    """What a token-protected Chroma deployment puts in front of `chroma run` (Chroma 1.x checks no
    tokens itself): requests without `Authorization: Bearer TOKEN` get 401, the rest are relayed."""

    def __init__(self, upstream_port: int) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.upstream_port = upstream_port
        self.seen: list[str | None] = []


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _TokenProxy

    def _relay(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append(self.headers.get("Authorization"))
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._reply(401, [("Content-Type", "application/json")], b'{"error":"Unauthorized","message":"no"}')
            return
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=30)
        skip = {"host", "connection", "content-length"}
        try:
            upstream.request(
                self.command,
                self.path,
                body=body,
                headers={k: v for k, v in self.headers.items() if k.lower() not in skip},
            )
            response = upstream.getresponse()
            data = response.read()
        except OSError:  # what nginx or Envoy answer when the Chroma behind them is down
            self._reply(502, [("Content-Type", "text/html")], b"<html><body>502 Bad Gateway</body></html>")
            return
        finally:
            upstream.close()
        skip |= {"transfer-encoding"}
        self._reply(response.status, [(k, v) for k, v in response.getheaders() if k.lower() not in skip], data)

    def _reply(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _relay

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def token_proxy(server_mode: ChromaServer) -> Iterator[_TokenProxy]:
    proxy = _TokenProxy(server_mode.port)
    thread = threading.Thread(target=proxy.serve_forever, name="token-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=10)


def test_the_token_is_sent_and_a_refused_one_is_explained(
    token_proxy: _TokenProxy, server_mode: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCHAT_CHROMA_PORT", str(token_proxy.server_address[1]))
    proxied = f"http://127.0.0.1:{token_proxy.server_address[1]}/"

    monkeypatch.setenv("RAGCHAT_CHROMA_TOKEN", TOKEN)
    session = open_session(get_settings())
    assert session.ingest_bytes("a.txt", ALPHA.encode()).status == "indexed"
    assert sources(session, "zebra crossing") == {"a.txt"}
    assert len(token_proxy.seen) > 5 and set(token_proxy.seen) == {f"Bearer {TOKEN}"}, "every request"
    label = session.models().vector_store
    assert label.startswith(f"chroma server {proxied}") and "token in Authorization" in label
    assert TOKEN not in label

    server_mode.stop()  # the proxy stays up and answers 502, as nginx would
    with pytest.raises(VectorStoreUnavailable) as gateway:
        session.search("zebra crossing")
    assert str(gateway.value).startswith(
        f"Chroma server at {proxied} is not reachable: HTTP 502 from the proxy in front of it; start it with"
    )
    server_mode.start()
    assert sources(session, "zebra crossing") == {"a.txt"}

    monkeypatch.setenv("RAGCHAT_CHROMA_TOKEN", "wrong-token")
    with pytest.raises(VectorStoreUnavailable) as refused:
        open_session(get_settings()).search("zebra crossing")
    assert str(refused.value) == (
        f"Chroma server at {proxied} refused the token: check RAGCHAT_CHROMA_TOKEN "
        "(and RAGCHAT_CHROMA_TOKEN_HEADER) (HTTP 401)"
    )
    monkeypatch.delenv("RAGCHAT_CHROMA_TOKEN")
    failed = open_session(get_settings()).ingest_bytes("b.txt", BETA.encode())
    assert failed.error == f"Chroma server at {proxied} asks for a token: set RAGCHAT_CHROMA_TOKEN (HTTP 401)"


def test_requests_to_the_server_are_bounded_by_the_timeout(
    server_mode: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chromadb's HTTP client has no timeout of its own; ours must reach its session."""
    monkeypatch.setenv("RAGCHAT_CHROMA_TIMEOUT_S", "7")
    store = open_session(get_settings()).document_index.store
    session = store._client._server._session  # the library internal this guards
    assert isinstance(session, httpx.Client)
    assert (session.timeout.read, session.timeout.connect) == (7.0, 5.0)


def test_an_unreachable_server_is_one_calm_sentence_everywhere(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()  # nothing listens there
    monkeypatch.setenv("RAGCHAT_CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("RAGCHAT_CHROMA_PORT", str(port))
    expected = (
        f"Chroma server at http://127.0.0.1:{port}/ is not reachable: connection refused; start it with "
        f"`chroma run --path ./chroma-data --host 127.0.0.1 --port {port}` or unset RAGCHAT_CHROMA_HOST"
    )
    with pytest.raises(VectorStoreUnavailable) as error:
        open_session(get_settings()).search("anything")
    assert str(error.value) == expected

    assert main(["search", "anything"]) == 1
    assert capsys.readouterr().err == f"ragchat: {expected}\n"
    assert main(["docs"]) == 0  # the registry is local: listed anyway, with the reason on stderr
    streams = capsys.readouterr()
    assert streams.out == "No documents indexed yet.\n"
    assert expected in streams.err

    # The app: notices instead of a crash, and it keeps answering reruns.
    st.cache_resource.clear()
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert any(expected in w.value for w in at.sidebar.warning), [w.value for w in at.sidebar.warning]
    at.chat_input[0].set_value("What does the report say?").run()
    assert not at.exception
    assert any(w.value == f"Could not answer: {expected}" for w in at.main.warning), [w.value for w in at.warning]
    st.cache_resource.clear()
