"""The Open-Meteo client's network boundaries, in process, against a 127.0.0.1 replay server."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from datetime import date

import pytest

from tests.openmeteo_replay import (
    ARCHIVE_PATH,
    FORECAST_PATH,
    FREDERICK_CO,
    FREDERICK_MD,
    FREDERICK_OK,
    GEOCODING_PATH,
    ReplayServer,
    Reply,
    geocoding,
    hourly,
    place,
    series,
)
from tools.openmeteo_client import OpenMeteoClient, OpenMeteoError
from tools.weather_models import Endpoints, Place

PARIS = Place.model_validate(place("Paris", 48.85341, 2.3488, "France", "FR", "Île-de-France", 2_138_551))


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as running:
        yield running


def client(
    server: ReplayServer, timeout_s: float = 2.0, retries: int = 1, max_bytes: int = 1_000_000
) -> OpenMeteoClient:
    endpoints = Endpoints(
        forecast=server.url(FORECAST_PATH), archive=server.url(ARCHIVE_PATH), geocoding=server.url(GEOCODING_PATH)
    )
    return OpenMeteoClient(endpoints, timeout_s=timeout_s, retries=retries, max_bytes=max_bytes)


def failure(call: object, *args: object) -> OpenMeteoError:
    with pytest.raises(OpenMeteoError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_geocoding_ambiguous_partial_and_empty_answers(server: ReplayServer) -> None:
    airport = place("Frederick Municipal Airport", 39.41, -77.37, "United States", "US")
    del airport["timezone"], airport["elevation"]  # optional keys can be missing, as in recorded answers
    server.routes[GEOCODING_PATH] = [
        Reply.json(geocoding(FREDERICK_MD, FREDERICK_CO, FREDERICK_OK, airport)),
        Reply.json(geocoding()),  # no match: the body has no "results" key at all
    ]
    places = client(server).geocode("Frederick")
    assert [p.admin1 for p in places] == ["Maryland", "Colorado", "Oklahoma", None]
    assert places[3].timezone is None and places[3].population is None
    assert client(server).geocode("Xyzzyqq") == []
    assert [r.query["name"] for r in server.seen] == [["Frederick"], ["Xyzzyqq"]]
    assert server.seen[0].query["count"] == ["10"]


@pytest.mark.parametrize(
    "name", ["Berlin&latitude=10&longitude=20", "../../v1/forecast?latitude=1", "Rome#x", "a b/../c%2F"]
)
def test_a_name_is_only_ever_one_encoded_query_value(server: ReplayServer, name: str) -> None:
    # The client below the input validation: even a name the request model would refuse cannot reach
    # another path or add a parameter.
    server.routes[GEOCODING_PATH] = Reply.json(geocoding())
    assert client(server).geocode(name) == []
    (seen,) = server.seen
    assert seen.path == GEOCODING_PATH
    assert seen.query == {"name": [name], "count": ["10"], "language": ["en"], "format": ["json"]}


def test_forecast_and_archive_parameters(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = Reply.json(hourly(series(3)))
    server.routes[ARCHIVE_PATH] = Reply.json(hourly(series(2)))
    forecast = client(server).forecast(PARIS, 3, "fahrenheit", "ms")
    archive = client(server).archive(PARIS, date(2024, 1, 1), date(2024, 1, 2), "celsius", "kmh")
    assert forecast.hourly is not None and len(forecast.hourly.time) == 72
    assert archive.hourly is not None and len(archive.hourly.time) == 48
    f, a = server.requests_to(FORECAST_PATH)[0].query, server.requests_to(ARCHIVE_PATH)[0].query
    assert f["latitude"] == ["48.8534"] and f["longitude"] == ["2.3488"] and f["forecast_days"] == ["3"]
    assert f["temperature_unit"] == ["fahrenheit"] and f["wind_speed_unit"] == ["ms"] and f["timezone"] == ["auto"]
    assert f["hourly"] == ["temperature_2m,precipitation,wind_speed_10m"]
    assert a["start_date"] == ["2024-01-01"] and a["end_date"] == ["2024-01-02"] and "forecast_days" not in a


def test_http_400_reports_open_meteos_reason(server: ReplayServer) -> None:
    reason = "Parameter 'start_date' is out of allowed range from 1940-01-01 to 2026-11-20"
    server.routes[ARCHIVE_PATH] = Reply.api_error(reason)
    error = failure(client(server).archive, PARIS, date(2030, 1, 1), date(2030, 1, 2), "celsius", "kmh")
    assert error.kind == "api_error"
    assert str(error) == f"Open-Meteo's archive server answered HTTP 400: {reason}"
    assert len(server.seen) == 1  # a 400 is not retried


def test_transient_errors_are_retried_a_bounded_number_of_times(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = [Reply(status=503), Reply.json(hourly(series(1)))]
    assert client(server, retries=1).forecast(PARIS, 1, "celsius", "kmh").hourly is not None
    assert len(server.seen) == 2

    server.seen.clear()
    server.routes[FORECAST_PATH] = Reply.json({"error": True, "reason": "overloaded"}, status=503)
    error = failure(client(server, retries=2).forecast, PARIS, 1, "celsius", "kmh")
    assert error.kind == "api_error" and "HTTP 503: overloaded" in str(error)
    assert len(server.seen) == 3  # one try and exactly two retries


def test_a_server_that_never_answers_times_out(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = Reply(hang=True)
    started = time.monotonic()
    error = failure(client(server, timeout_s=0.5, retries=1).forecast, PARIS, 1, "celsius", "kmh")
    elapsed = time.monotonic() - started
    assert error.kind == "timeout"
    assert str(error) == "Open-Meteo's forecast server did not answer within 0.5 s"
    assert len(server.seen) == 2 and elapsed < 3.0  # two attempts of 0.5 s plus a 0.5 s pause


def test_an_overall_deadline_bounds_the_retries(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = Reply(hang=True)
    bounded = client(server, timeout_s=5.0, retries=3)
    bounded.deadline = time.monotonic() + 0.8
    started = time.monotonic()
    assert failure(bounded.forecast, PARIS, 1, "celsius", "kmh").kind == "timeout"
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_an_oversized_body_is_refused(server: ReplayServer, declared: bool) -> None:
    body = json.dumps(hourly(series(16))).encode()
    server.routes[FORECAST_PATH] = Reply(body=body, content_length=declared)
    error = failure(client(server, max_bytes=len(body) // 4).forecast, PARIS, 16, "celsius", "kmh")
    assert error.kind == "too_large"
    assert f"larger than the {len(body) // 4:,} byte limit" in str(error)


def test_the_cap_applies_after_decompression(server: ReplayServer) -> None:
    bomb = gzip.compress(b" " * 5_000_000)  # 5 MB of spaces in ~5 KB
    server.routes[FORECAST_PATH] = Reply(body=bomb, headers={"Content-Encoding": "gzip"})
    error = failure(client(server, max_bytes=1_000_000).forecast, PARIS, 1, "celsius", "kmh")
    assert error.kind == "too_large"


def test_a_redirect_to_another_host_is_refused(server: ReplayServer) -> None:
    with ReplayServer() as elsewhere:  # a real server on another origin (another port)
        elsewhere.routes[GEOCODING_PATH] = Reply.json(geocoding(FREDERICK_MD))
        server.routes[GEOCODING_PATH] = Reply.redirect(elsewhere.url(GEOCODING_PATH) + "?name=Frederick")
        error = failure(client(server).geocode, "Frederick")
        assert error.kind == "redirect_refused"
        assert "redirects to other hosts are refused" in str(error)
        assert elsewhere.seen == []  # it was never contacted
    server.routes[GEOCODING_PATH] = Reply.redirect("https://evil.example/v1/search")
    assert failure(client(server).geocode, "Frederick").kind == "redirect_refused"


def test_a_redirect_on_the_same_host_is_followed(server: ReplayServer) -> None:
    server.routes[GEOCODING_PATH] = Reply.redirect("/v1/search-moved?name=Frederick")
    server.routes["/v1/search-moved"] = Reply.json(geocoding(FREDERICK_CO))
    assert [p.admin1 for p in client(server).geocode("Frederick")] == ["Colorado"]
    assert [r.path for r in server.seen] == [GEOCODING_PATH, "/v1/search-moved"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"latitude": 1.0, "hourly": {"time": ["2026-01-01T00:00"', "not valid JSON"),
        (b"<html>Bad gateway</html>", "not valid JSON"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b'{"latitude": 1, "longitude": 2, "hourly": {"time": ["2026-01-01T00:00"], "temperature_2m": [NaN]}}', "JSON"),
        (
            b'{"latitude": 1, "longitude": 2, "hourly": {"time": ["2026-01-01T00:00", "2026-01-01T01:00"], '
            b'"temperature_2m": [1.5]}}',
            "temperature_2m has 1 values for 2 times",
        ),
        (b'{"latitude": 1, "longitude": 2, "hourly": {"time": ["soon"]}}', "hourly.time.0"),
    ],
)
def test_malformed_answers_are_named_not_crashed_on(server: ReplayServer, body: bytes, detail: str) -> None:
    server.routes[FORECAST_PATH] = Reply(body=body)
    error = failure(client(server).forecast, PARIS, 1, "celsius", "kmh")
    assert error.kind == "bad_response" and detail in str(error)


def test_nulls_come_through_as_missing_values(server: ReplayServer) -> None:
    data = series(1)
    data["temperature_2m"][3] = None
    data["wind_speed_10m"] = [None] * 24
    del data["precipitation"]
    server.routes[FORECAST_PATH] = Reply.json(hourly(data))
    block = client(server).forecast(PARIS, 1, "celsius", "kmh").hourly
    assert block is not None and block.temperature_2m is not None and block.temperature_2m[3] is None
    assert block.wind_speed_10m == [None] * 24 and block.precipitation is None
