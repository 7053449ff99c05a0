"""A 127.0.0.1 server speaking just enough of Ollama's documented API: GET /api/tags lists the models
it was given, POST /api/chat streams a fixed reply as NDJSON (HTTP/1.1, chunked, as Ollama sends it)
and keeps the request.

`die_after=N` makes it fail after N reply parts, before the `done` part, in one of the two ways a
real Ollama does: `death="drop"` (the server process dies: the connection closes mid-body) or
`death="error"` (the model runner crashes: Ollama sends an `{"error": …}` line, docs.ollama.com/api/errors).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

REPLY_WORDS = ["Hello", " from", " ollama"]
RUNNER_ERROR = "an error was encountered while running the model: unexpected EOF"


class FakeOllama:
    def __init__(
        self,
        models: tuple[str, ...] = ("llama3.2:latest",),
        reply: list[str] | None = None,
        die_after: int | None = None,
        death: Literal["drop", "error"] = "drop",
    ) -> None:
        self.models = list(models)
        self.reply = reply or REPLY_WORDS
        self.die_after = die_after
        self.death = death
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

    @property
    def dies(self) -> bool:
        return self.die_after is not None and self.die_after < len(self.reply)

    def _chat_lines(self, model: str) -> Iterator[dict[str, Any]]:
        """The reply's parts, then `done`, or the failure after `die_after` parts (None: drop)."""
        for index, word in enumerate(self.reply):
            if index == self.die_after:
                break
            yield {"model": model, "message": {"role": "assistant", "content": word}, "done": False}
        else:
            yield {"model": model, "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}
            return
        if self.death == "error":
            yield {"error": RUNNER_ERROR}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                del args

            def do_GET(self) -> None:
                body = json.dumps({"models": [{"name": name, "model": name} for name in fake.models]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for line in fake._chat_lines(body["model"]):
                    data = json.dumps(line).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                if fake.dies and fake.death == "drop":
                    self.close_connection = True  # the body's last chunk never comes
                    return
                self.wfile.write(b"0\r\n\r\n")

        return Handler
