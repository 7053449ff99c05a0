"""HTTP to Open-Meteo, inside the weather subprocess, with the network boundaries enforced here:

- only the three configured endpoints (scheme, host and port) are ever contacted, each on its own path;
- user text travels only as an encoded query parameter (requests encodes `params`), never in a path or host;
- a redirect is followed only within the same origin (at most 3 hops); to any other origin it is refused;
- a body larger than `max_bytes` (after decompression) is refused, before reading when Content-Length says so;
- every request has a timeout, also bounded by the subprocess's overall deadline;
- a connection error, timeout, 429 or 5xx is retried at most `retries` times with a short backoff;
- the environment is not trusted: no proxies, no .netrc credentials (`trust_env = False`).
"""

from __future__ import annotations

import json
import time
from datetime import date, datetime
from typing import Annotated, Any, NoReturn
from urllib.parse import urljoin, urlsplit

import requests
from pydantic import BaseModel, Field, ValidationError, model_validator
from urllib3.exceptions import ReadTimeoutError

from tools.weather_models import Endpoints, FailureKind, Place

HOURLY_VARIABLES = ("temperature_2m", "precipitation", "wind_speed_10m")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 3
BACKOFF_S = 0.5
CHUNK_BYTES = 64 * 1024
USER_AGENT = "ragchat-weather/0.1"

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]


class OpenMeteoError(Exception):
    """A request failed; `kind` classifies it and the message is fit to show a person."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind


class HourlyBlock(BaseModel):
    time: list[datetime]
    temperature_2m: list[FiniteFloat | None] | None = None
    precipitation: list[FiniteFloat | None] | None = None
    wind_speed_10m: list[FiniteFloat | None] | None = None

    @model_validator(mode="after")
    def _parallel(self) -> HourlyBlock:
        for name in HOURLY_VARIABLES:
            values = getattr(self, name)
            if values is not None and len(values) != len(self.time):
                raise ValueError(f"{name} has {len(values)} values for {len(self.time)} times")
        return self


class HourlyResponse(BaseModel):
    """The part of a /v1/forecast or /v1/archive answer the tool uses."""

    latitude: float
    longitude: float
    timezone: str = "GMT"
    utc_offset_seconds: int = 0
    elevation: float | None = None
    hourly_units: dict[str, str] = Field(default_factory=dict)
    hourly: HourlyBlock | None = None


class OpenMeteoClient:
    def __init__(
        self,
        endpoints: Endpoints,
        timeout_s: float,
        retries: int,
        max_bytes: int,
        deadline: float | None = None,
    ) -> None:
        """`deadline` is a time.monotonic() value after which no request is started or waited on."""
        self.endpoints = endpoints
        self.timeout_s = timeout_s
        self.retries = retries
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.allowed_origins = {_origin(url) for url in (endpoints.forecast, endpoints.archive, endpoints.geocoding)}
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.headers["User-Agent"] = USER_AGENT

    # ------------------------------------------------------------------ the three calls

    def geocode(self, name: str, country_code: str | None = None, count: int = 10) -> list[Place]:
        """Places matching `name`, best first; [] when Open-Meteo knows none (its body then has no
        `results` key at all)."""
        params: dict[str, Any] = {"name": name, "count": count, "language": "en", "format": "json"}
        if country_code:
            params["countryCode"] = country_code.upper()
        body = self.get_json("geocoding", self.endpoints.geocoding, params)
        results = body.get("results", [])
        if not isinstance(results, list):
            raise OpenMeteoError("bad_response", "Open-Meteo's geocoding answer has an unexpected shape")
        places = []
        for raw in results:
            try:
                places.append(Place.model_validate(raw))
            except ValidationError:
                continue  # one malformed entry does not hide the others
        return places

    def forecast(self, place: Place, days: int, temperature_unit: str, wind_speed_unit: str) -> HourlyResponse:
        params = self._hourly_params(place, temperature_unit, wind_speed_unit)
        params["forecast_days"] = days
        return self._hourly("forecast", self.endpoints.forecast, params)

    def archive(
        self, place: Place, start: date, end: date, temperature_unit: str, wind_speed_unit: str
    ) -> HourlyResponse:
        params = self._hourly_params(place, temperature_unit, wind_speed_unit)
        params["start_date"] = start.isoformat()
        params["end_date"] = end.isoformat()
        return self._hourly("archive", self.endpoints.archive, params)

    @staticmethod
    def _hourly_params(place: Place, temperature_unit: str, wind_speed_unit: str) -> dict[str, Any]:
        return {
            "latitude": f"{place.latitude:.4f}",
            "longitude": f"{place.longitude:.4f}",
            "hourly": ",".join(HOURLY_VARIABLES),
            "timezone": "auto",
            "temperature_unit": temperature_unit,
            "wind_speed_unit": wind_speed_unit,
            "precipitation_unit": "mm",
        }

    def _hourly(self, service: str, url: str, params: dict[str, Any]) -> HourlyResponse:
        body = self.get_json(service, url, params)
        try:
            return HourlyResponse.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            detail = str(first["msg"]).removeprefix("Value error, ")
            raise OpenMeteoError(
                "bad_response", f"Open-Meteo's {service} answer has an unexpected shape ({where}: {detail})"
            ) from None

    # ------------------------------------------------------------------ one GET, safely

    def get_json(self, service: str, url: str, params: dict[str, Any]) -> dict[str, Any]:
        """GET url?params and parse a JSON object, with retries for transient failures only."""
        attempt = 0
        while True:
            try:
                status, body = self._get(service, url, params)
            except OpenMeteoError as exc:
                if exc.kind not in ("timeout", "network") or not self._may_retry(attempt):
                    raise
            else:
                if status in RETRY_STATUSES and self._may_retry(attempt):
                    pass
                elif status != 200:
                    _raise_for_status(service, status, body)
                else:
                    return _parse_object(service, body)
            time.sleep(min(BACKOFF_S * 2**attempt, max(self._remaining(), 0.0)))
            attempt += 1

    def _may_retry(self, attempt: int) -> bool:
        return attempt < self.retries and self._remaining() > BACKOFF_S

    def _remaining(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    def _get(self, service: str, url: str, params: dict[str, Any] | None) -> tuple[int, bytes]:
        for _ in range(MAX_REDIRECTS + 1):
            self._check_allowed(service, url)
            timeout = min(self.timeout_s, self._remaining())
            if timeout <= 0:
                raise OpenMeteoError("timeout", f"Open-Meteo's {service} server: no time left for the request")
            started = time.monotonic()
            try:
                response = self.session.get(url, params=params, timeout=timeout, allow_redirects=False, stream=True)
            except requests.Timeout:
                raise OpenMeteoError(
                    "timeout", f"Open-Meteo's {service} server did not answer within {round(timeout, 1):g} s"
                ) from None
            except requests.RequestException as exc:
                raise OpenMeteoError(
                    "network", f"could not reach Open-Meteo's {service} server: {_short(exc)}"
                ) from None
            with response:
                if response.status_code in REDIRECT_STATUSES:
                    url = urljoin(response.url, response.headers.get("Location", ""))
                    params = None  # the Location is the whole next URL
                    if _origin(url) != _origin(response.url):
                        raise OpenMeteoError(
                            "redirect_refused",
                            f"Open-Meteo's {service} server redirected to {urlsplit(url).netloc or url!r}; "
                            "redirects to other hosts are refused",
                        )
                    continue
                body = self._read_capped(service, response, started + timeout)
                return response.status_code, body
        raise OpenMeteoError("redirect_refused", f"Open-Meteo's {service} server redirected too many times")

    def _check_allowed(self, service: str, url: str) -> None:
        if _origin(url) not in self.allowed_origins:
            raise OpenMeteoError("redirect_refused", f"{urlsplit(url).netloc!r} is not an allowed Open-Meteo host")

    def _read_capped(self, service: str, response: requests.Response, deadline: float) -> bytes:
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise OpenMeteoError("too_large", self._too_large(service))
        body = bytearray()
        try:
            for chunk in response.iter_content(CHUNK_BYTES):  # decoded: the cap also stops gzip bombs
                body += chunk
                if len(body) > self.max_bytes:
                    raise OpenMeteoError("too_large", self._too_large(service))
                if time.monotonic() > deadline:
                    raise OpenMeteoError("timeout", f"Open-Meteo's {service} server was too slow to send its answer")
        except requests.RequestException as exc:
            # requests reports a read timeout while streaming as ConnectionError(ReadTimeoutError(...)).
            if isinstance(exc.args[0] if exc.args else None, ReadTimeoutError):
                raise OpenMeteoError(
                    "timeout", f"Open-Meteo's {service} server stopped sending within {self.timeout_s:g} s"
                ) from None
            raise OpenMeteoError("network", f"reading Open-Meteo's {service} answer failed: {_short(exc)}") from None
        return bytes(body)

    def _too_large(self, service: str) -> str:
        return f"Open-Meteo's {service} answer is larger than the {self.max_bytes:,} byte limit; it was not read"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def _parse_object(service: str, body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        message = f"Open-Meteo's {service} answer is not valid JSON ({_short(exc)})"
        raise OpenMeteoError("bad_response", message) from None
    if not isinstance(data, dict):
        raise OpenMeteoError("bad_response", f"Open-Meteo's {service} answer is not a JSON object")
    return data


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number JSON allows")


def _raise_for_status(service: str, status: int, body: bytes) -> NoReturn:
    """Open-Meteo explains a refused request as HTTP 400 {"error": true, "reason": "..."}."""
    reason = None
    try:
        data = json.loads(body.decode("utf-8"))
        if isinstance(data, dict) and isinstance(data.get("reason"), str):
            reason = data["reason"]
    except (UnicodeDecodeError, ValueError):
        pass
    detail = f": {_short_text(reason)}" if reason else ""
    raise OpenMeteoError("api_error", f"Open-Meteo's {service} server answered HTTP {status}{detail}")


def _short(exc: BaseException) -> str:
    return _short_text(str(exc) or type(exc).__name__)


def _short_text(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
