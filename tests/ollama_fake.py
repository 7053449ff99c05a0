"""A 127.0.0.1 server speaking just enough of Ollama's documented API: GET /api/tags lists the models
it was given, POST /api/chat streams a fixed reply as NDJSON and keeps the request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY_WORDS = ["Hello", " from", " ollama"]


class FakeOllama:
    def __init__(self, models: tuple[str, ...] = ("llama3.2:latest",)) -> None:
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                del args

            def _send(self, lines: Iterator[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.end_headers()
                for line in lines:
                    self.wfile.write(json.dumps(line).encode() + b"\n")
                    self.wfile.flush()

            def do_GET(self) -> None:
                self._send(iter([{"models": [{"name": name, "model": name} for name in fake.models]}]))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                model = body["model"]
                parts = [
                    {"model": model, "message": {"role": "assistant", "content": w}, "done": False} for w in REPLY_WORDS
                ]
                done = {"model": model, "message": {"role": "assistant", "content": ""}, "done": True}
                self._send(iter([*parts, done]))

        return Handler
