"""App.weather end to end: settings → sandboxed subprocess → 127.0.0.1 replay server → validated
analysis → explanation by the real 0.5B model (once) or a note saying why there is none."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.settings import get_settings
from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener
from ragchat.application import open_session
from tests.openmeteo_replay import (
    ARCHIVE_PATH,
    FORECAST_PATH,
    FREDERICK_CO,
    FREDERICK_MD,
    FREDERICK_OK,
    GEOCODING_PATH,
    LONDON,
    LONDON_ONTARIO,
    ReplayServer,
    Reply,
    geocoding_by_name,
    hourly,
    replay,
    series,
)
from tools.weather_models import WeatherAnalysis, WeatherError, WeatherRequest

PLACES = {"London": [LONDON, LONDON_ONTARIO], "Frederick": [FREDERICK_MD, FREDERICK_CO, FREDERICK_OK]}


@pytest.fixture
def server(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    with replay(monkeypatch) as running:
        running.routes[GEOCODING_PATH] = geocoding_by_name(PLACES)
        running.routes[FORECAST_PATH] = Reply.json(hourly(series(7)))
        yield running


def weather(city: str = "London", **fields: object) -> WeatherAnalysis:
    return open_session(get_settings()).app.weather(WeatherRequest(city=city, explain=False, **fields))  # type: ignore[arg-type]


def failure(city: str = "London", **fields: object) -> WeatherError:
    with pytest.raises(WeatherError) as caught:
        weather(city, **fields)
    return caught.value


def test_a_forecast_analysis_matches_an_independent_computation(server: ReplayServer) -> None:
    analysis = weather("London", days=7)
    data = series(7)

    assert analysis.place.name == "London" and analysis.place.country_code == "GB"
    assert [p.admin1 for p in analysis.candidates] == ["England", "Ontario"]
    assert analysis.source == "forecast" and (analysis.start, analysis.end) == (date(2026, 7, 26), date(2026, 8, 1))
    assert analysis.units.model_dump() == {"temperature": "°C", "precipitation": "mm", "wind_speed": "km/h"}
    assert analysis.explanation is None and analysis.explanation_note is None  # explain=False: the LLM was not asked
    assert analysis.notes == [] and all(m.missing == 0 for m in analysis.analytics.missingness)

    temps, rain = data["temperature_2m"], data["precipitation"]
    means = [sum(temps[d * 24 : d * 24 + 24]) / 24 for d in range(7)]
    assert [d.temperature_mean for d in analysis.daily] == [pytest.approx(m, abs=0.006) for m in means]
    assert [d.precipitation_total for d in analysis.daily] == [
        pytest.approx(sum(rain[d * 24 : d * 24 + 24]), abs=0.006) for d in range(7)
    ]
    mean = sum(means) / 7
    sigma = math.sqrt(sum((m - mean) ** 2 for m in means) / 7)
    assert analysis.analytics.volatility == pytest.approx(sigma, abs=0.006)
    z = [(m - mean) / sigma for m in means]
    assert [a.z_score for a in analysis.analytics.anomalies] == [pytest.approx(v, abs=0.006) for v in z if abs(v) > 1.5]
    assert analysis.daily[6].temperature_mean_3d == pytest.approx(sum(means[4:7]) / 3, abs=0.006)
    assert analysis.analytics.temperature_max is not None and analysis.analytics.temperature_max.value == max(temps)

    # What the server saw: the name as one parameter, then the resolved coordinates.
    geo, forecast = server.seen
    assert geo.path == GEOCODING_PATH and geo.query["name"] == ["London"]
    assert forecast.path == FORECAST_PATH
    assert forecast.query["latitude"] == ["51.5085"] and forecast.query["longitude"] == ["-0.1257"]
    assert forecast.query["forecast_days"] == ["7"]
    assert {"tool_ms", "geocoding_ms", "fetch_ms"} <= set(analysis.timings_ms)


def test_a_past_range_uses_the_archive_with_units(server: ReplayServer) -> None:
    end = date.today() - timedelta(days=10)
    start = end - timedelta(days=1)
    server.routes[ARCHIVE_PATH] = Reply.json(
        hourly(series(2, start=_midnight(start)), temperature_unit="°F", wind_unit="m/s")
    )
    analysis = weather("London", start=start, end=end, temperature_unit="fahrenheit", wind_speed_unit="ms")
    assert analysis.source == "archive" and (analysis.start, analysis.end) == (start, end)
    assert analysis.units.temperature == "°F" and analysis.units.wind_speed == "m/s"
    (archive,) = server.requests_to(ARCHIVE_PATH)
    assert archive.query["start_date"] == [start.isoformat()] and archive.query["end_date"] == [end.isoformat()]
    assert archive.query["temperature_unit"] == ["fahrenheit"] and archive.query["wind_speed_unit"] == ["ms"]
    assert server.requests_to(FORECAST_PATH) == []


def test_units_other_than_requested_are_shown_as_reported_with_an_alert(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = Reply.json(hourly(series(2), wind_unit="mp/h"))
    analysis = weather("London", days=2)
    assert analysis.units.wind_speed == "mp/h"
    assert analysis.notes[0].level == "alert" and "not the requested km/h" in analysis.notes[0].text


def test_nulls_give_partial_results_and_alerts(server: ReplayServer) -> None:
    data = series(3)
    data["wind_speed_10m"] = [None] * 72
    for h in range(30, 36):
        data["temperature_2m"][h] = None
    server.routes[FORECAST_PATH] = Reply.json(hourly(data))
    analysis = weather("London", days=3)
    assert analysis.analytics.wind_speed_mean is None and analysis.analytics.temperature_mean is not None
    assert analysis.daily[1].temperature_hours == 18
    missing = {m.variable: m.percent for m in analysis.analytics.missingness}
    assert missing == {"temperature": pytest.approx(100 * 6 / 72, abs=0.006), "precipitation": 0.0, "wind_speed": 100.0}
    texts = [n.text for n in analysis.notes]
    assert texts[0] == "No wind speed data came back: its figures are not available."
    assert any("2026-07-27 (18 of 24 h)" in t for t in texts)


def test_unknown_and_ambiguous_places(server: ReplayServer) -> None:
    unknown = failure("Xyzzyqq")
    assert unknown.kind == "not_found" and str(unknown) == "no place called 'Xyzzyqq'"
    ambiguous = failure("Frederick")
    assert ambiguous.kind == "ambiguous" and len(ambiguous.failure.candidates) == 3
    assert server.requests_to(FORECAST_PATH) == []  # nothing fetched for an unresolved name
    chosen = weather("Frederick", pick=2, days=7)
    assert chosen.place.admin1 == "Colorado"
    assert server.requests_to(FORECAST_PATH)[0].query["latitude"] == ["40.0992"]


def test_open_meteos_reason_and_the_resolved_place_survive_an_api_error(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = Reply.api_error("Parameter 'forecast_days' must not exceed 16")
    error = failure("London", days=7)
    assert error.kind == "api_error"
    assert str(error) == "Open-Meteo's forecast server answered HTTP 400: Parameter 'forecast_days' must not exceed 16"
    assert error.failure.place is not None and error.failure.place.country_code == "GB"


def test_a_hanging_server_is_a_timeout_not_a_hang(server: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCHAT_OPENMETEO_TIMEOUT_S", "1")
    monkeypatch.setenv("RAGCHAT_OPENMETEO_RETRIES", "0")
    server.routes[FORECAST_PATH] = Reply(hang=True)
    started = time.monotonic()
    error = failure("London")
    assert time.monotonic() - started < 5
    assert error.kind == "timeout" and str(error) == "Open-Meteo's forecast server did not answer within 1 s"


def test_the_sandbox_kill_is_the_backstop(server: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Per-request timeout longer than the whole sandbox: the app's wall clock ends it.
    monkeypatch.setenv("RAGCHAT_OPENMETEO_TIMEOUT_S", "30")
    monkeypatch.setenv("RAGCHAT_WEATHER_SANDBOX_TIMEOUT_S", "2")
    server.routes[FORECAST_PATH] = Reply(hang=True)
    started = time.monotonic()
    error = failure("London")
    assert time.monotonic() - started < 5
    assert error.kind in ("timeout", "sandbox")
    assert "did not answer within 1.5 s" in str(error) or "took longer than 2 s" in str(error)


def test_malformed_json_is_a_clear_error(server: ReplayServer) -> None:
    server.routes[FORECAST_PATH] = Reply(body=b'{"latitude": 51.5, "hourly": {"time": [')
    error = failure("London")
    assert error.kind == "bad_response" and "forecast answer is not valid JSON" in str(error)


def test_a_city_name_carrying_url_syntax_never_reaches_the_server(server: ReplayServer) -> None:
    for city in ("London&latitude=48.85&longitude=2.35", "../v1/forecast"):
        with pytest.raises(ValueError, match="may contain only letters"):
            WeatherRequest(city=city)
    assert server.seen == []


class BrokenLLM(LLM):
    label = "broken (test)"

    def stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        on_queued: QueueListener | None = None,
    ) -> Iterator[str]:
        raise LLMError("model file missing")

    def complete_json(self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int) -> str:
        raise LLMError("model file missing")


def test_a_failing_model_keeps_the_analysis_and_says_why(server: ReplayServer) -> None:
    session = open_session(get_settings(), llm=BrokenLLM())
    analysis = session.app.weather(WeatherRequest(city="London", days=7))
    assert analysis.daily and analysis.analytics.temperature_mean is not None
    assert analysis.explanation is None
    assert analysis.explanation_note == (
        "The explanation is unavailable: the language model failed (model file missing)."
    )


def test_the_real_model_explains_the_computed_figures(server: ReplayServer) -> None:
    session = open_session(get_settings())
    analysis = session.app.weather(WeatherRequest(city="London", days=7))
    assert analysis.explanation and len(analysis.explanation) > 40
    assert analysis.explanation_model is not None and "qwen2.5-coder-0.5b" in analysis.explanation_model
    assert analysis.timings_ms["explain_ms"] > 0
    if analysis.explanation_note:  # the number check may flag the small model; it must then name figures
        assert analysis.explanation_note.startswith("The explanation mentions figures that are not in")


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day)
