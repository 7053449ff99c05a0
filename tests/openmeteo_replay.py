"""A 127.0.0.1 HTTP server that replays Open-Meteo-shaped answers, and builders for those answers.

The bodies copy the layout of real recorded responses (../shared/data/openmeteo): geocoding `results`
with optional keys missing on some entries and no `results` key at all when nothing matches; forecast
and archive answers as parallel hourly arrays keyed by local `time` strings (`YYYY-MM-DDTHH:MM`),
`hourly_units` mirroring the keys, `null` for a missing value; errors as HTTP 400
{"error": true, "reason": "..."}. The values are generated here, never copied.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

GEOCODING_PATH = "/v1/search"
FORECAST_PATH = "/v1/forecast"
ARCHIVE_PATH = "/v1/archive"
HANG_LIMIT_S = 30.0  # a "never answers" handler still gives up after this, so no test can hang forever


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # accept the request, then never answer
    content_length: bool = True  # False: no Content-Length, the body ends when the connection closes

    @classmethod
    def json(cls, payload: Any, status: int = 200) -> Reply:
        return cls(status=status, body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})

    @classmethod
    def api_error(cls, reason: str) -> Reply:
        return cls.json({"error": True, "reason": reason}, status=400)

    @classmethod
    def redirect(cls, location: str) -> Reply:
        return cls(status=302, headers={"Location": location})


@dataclass
class SeenRequest:
    path: str
    query: dict[str, list[str]]
    raw_query: str


Route = Reply | list[Reply] | Callable[[SeenRequest], Reply]


class ReplayServer:
    """Routes map a path to a Reply, to a list of Replies served in turn (the last one repeats), or to a
    function of the request (e.g. geocoding answers by `name`)."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[SeenRequest] = []
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def requests_to(self, path: str) -> list[SeenRequest]:
        return [r for r in self.seen if r.path == path]

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def _next_reply(self, seen: SeenRequest) -> Reply:
        route = self.routes.get(seen.path)
        if route is None:
            return Reply.json({"error": True, "reason": f"no route {seen.path}"}, status=404)
        if isinstance(route, list):
            return route.pop(0) if len(route) > 1 else route[0]
        if isinstance(route, Reply):
            return route
        return route(seen)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                seen = SeenRequest(parts.path, parse_qs(parts.query), parts.query)
                server.seen.append(seen)
                reply = server._next_reply(seen)
                if reply.hang:
                    server._stop.wait(HANG_LIMIT_S)
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.content_length:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                # The client may stop reading (the size cap): that is the point, not an error.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # no access log on the test output

        return Handler


@contextmanager
def replay(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    """A running server with the three RAGCHAT_OPENMETEO_*_URL settings pointing at it, and short
    timeouts so a failure case costs seconds."""
    with ReplayServer() as server:
        monkeypatch.setenv("RAGCHAT_OPENMETEO_GEOCODING_URL", server.url(GEOCODING_PATH))
        monkeypatch.setenv("RAGCHAT_OPENMETEO_FORECAST_URL", server.url(FORECAST_PATH))
        monkeypatch.setenv("RAGCHAT_OPENMETEO_ARCHIVE_URL", server.url(ARCHIVE_PATH))
        monkeypatch.setenv("RAGCHAT_OPENMETEO_TIMEOUT_S", "2")
        monkeypatch.setenv("RAGCHAT_WEATHER_SANDBOX_TIMEOUT_S", "20")
        yield server


# ----------------------------------------------------------------------------- bodies


def place(
    name: str,
    latitude: float,
    longitude: float,
    country: str,
    country_code: str,
    admin1: str | None = None,
    population: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A geocoding result; optional keys are left out when None, as Open-Meteo does."""
    row: dict[str, Any] = {
        "id": zlib.crc32(f"{name}{latitude}{longitude}".encode()) % 10_000_000,
        "name": name,
        "latitude": latitude,
        "longitude": longitude,
        "elevation": 20.0,
        "feature_code": "PPL",
        "country_code": country_code,
        "timezone": "Europe/London",
        "country": country,
        **extra,
    }
    if admin1 is not None:
        row["admin1"] = admin1
    if population is not None:
        row["population"] = population
    return row


def geocoding(*results: dict[str, Any]) -> dict[str, Any]:
    """No match is a body with no `results` key at all (as the real API answers)."""
    body: dict[str, Any] = {"generationtime_ms": 0.41}
    if results:
        body["results"] = list(results)
    return body


LONDON = place("London", 51.50853, -0.12574, "United Kingdom", "GB", "England", 8_961_989)
LONDON_ONTARIO = place("London", 42.98339, -81.23304, "Canada", "CA", "Ontario", 346_765)
FREDERICK_MD = place("Frederick", 39.41427, -77.41054, "United States", "US", "Maryland", 69_479)
FREDERICK_OK = place("Frederick", 34.39203, -99.01841, "United States", "US", "Oklahoma", 3_692)
FREDERICK_CO = place("Frederick", 40.09915, -104.9372, "United States", "US", "Colorado", 11_413)


def series(days: int, start: datetime | None = None) -> dict[str, list[Any]]:
    """`days` × 24 hours of plausible weather: a daily cycle on a drifting base, showers, breezes."""
    start = start or datetime(2026, 7, 26)
    hours = days * 24
    time = [(start + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M") for h in range(hours)]
    base = [16.0 + 1.5 * d + (4.5 if d == days - 2 else 0.0) for d in range(days)]
    temperature = [round(base[h // 24] + 4.0 * math.sin((h % 24 - 9) / 24 * 2 * math.pi), 1) for h in range(hours)]
    precipitation = [round(0.4 * (h % 7 == 0) + 1.2 * (h // 24 == 1 and 10 <= h % 24 < 14), 1) for h in range(hours)]
    wind = [round(9.0 + 6.0 * abs(math.sin(h / 5)) + (h // 24), 1) for h in range(hours)]
    return {"time": time, "temperature_2m": temperature, "precipitation": precipitation, "wind_speed_10m": wind}


def hourly(
    data: dict[str, list[Any]],
    latitude: float = 51.5,
    longitude: float = -0.120000124,
    temperature_unit: str = "°C",
    wind_unit: str = "km/h",
    timezone: str = "Europe/London",
) -> dict[str, Any]:
    """A /v1/forecast or /v1/archive answer around the given hourly arrays."""
    units = {"time": "iso8601", "temperature_2m": temperature_unit, "precipitation": "mm", "wind_speed_10m": wind_unit}
    return {
        "latitude": latitude,
        "longitude": longitude,
        "generationtime_ms": 0.05,
        "utc_offset_seconds": 3600,
        "timezone": timezone,
        "timezone_abbreviation": "GMT+1",
        "elevation": 23.0,
        "hourly_units": {k: v for k, v in units.items() if k in data},
        "hourly": data,
    }


def geocoding_by_name(known: dict[str, list[dict[str, Any]]]) -> Callable[[SeenRequest], Reply]:
    """A geocoding route that answers by the `name` parameter (case-insensitive); unknown: no results."""
    folded = {name.casefold(): results for name, results in known.items()}

    def answer(seen: SeenRequest) -> Reply:
        name = seen.query.get("name", [""])[0]
        return Reply.json(geocoding(*folded.get(name.casefold(), [])))

    return answer
