"""OpenAICompatLLM when a server's event stream breaks off (the normal path runs against xllamacpp's
own server in tests/e2e/test_llm_providers.py, which cannot be made to die mid-reply): a 127.0.0.1
server sends two server-sent events and then drops the connection, or ends without `data: [DONE]`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

from providers.llm.base import ChatMessage, LLMError
from providers.llm.openai_compat import OpenAICompatLLM

PROMPT = [ChatMessage(role="user", content="hi")]
WORDS = ["Hello", " there"]


def serve(
    ending: Literal["drop", "no-done", "done"], words: list[str] = WORDS, content_type: str | None = "text/event-stream"
) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            del args

        def chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            if content_type is not None:
                self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for word in words:
                event = json.dumps({"choices": [{"delta": {"content": word}}]}, ensure_ascii=False)
                self.chunk(b"data: " + event.encode() + b"\n\n")
            if ending == "drop":
                self.close_connection = True
                return
            if ending == "done":
                self.chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def read(
    ending: Literal["drop", "no-done", "done"], words: list[str] = WORDS, content_type: str | None = "text/event-stream"
) -> tuple[list[str], str | None]:
    """The tokens streamed, and the LLMError's message if one was raised."""
    server, base = serve(ending, words, content_type)
    got: list[str] = []
    try:
        for token in OpenAICompatLLM(base, "m", timeout_s=5).stream(PROMPT, 8, 0.0):
            got.append(token)
    except LLMError as exc:
        return got, str(exc)
    finally:
        server.shutdown()
        server.server_close()
    return got, None


def test_a_dropped_connection_keeps_the_text_and_says_where_it_broke() -> None:
    got, error = read("drop")
    assert got == WORDS
    assert error is not None and "broke off its reply after 2 events" in error


def test_a_stream_without_done_is_not_taken_for_a_whole_reply() -> None:
    got, error = read("no-done")
    assert got == WORDS
    assert error is not None and error.endswith("stopped mid-reply: its stream ended after 2 events without [DONE].")


def test_a_finished_stream_is_no_error() -> None:
    assert read("done") == (WORDS, None)


def test_events_are_read_as_utf8_whatever_the_content_type_says() -> None:
    """llama.cpp's server and Ollama send `text/event-stream` without a charset, which requests would
    decode as Latin-1 (and not decode at all without a Content-Type); server-sent events are UTF-8."""
    words = ["Café", " à Zürich", " 東京"]
    for content_type in ("text/event-stream", "text/event-stream; charset=utf-8", None):
        assert read("done", words, content_type) == (words, None)
