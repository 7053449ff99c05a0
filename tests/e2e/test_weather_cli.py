"""`ragchat weather` as a user runs it: a subprocess, the sandboxed tool under it, a 127.0.0.1 replay server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import get_settings
from ragchat.application import open_session
from tests.openmeteo_replay import (
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
from tools.weather_models import WeatherRequest


@pytest.fixture
def server(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    with replay(monkeypatch) as running:
        running.routes[GEOCODING_PATH] = geocoding_by_name(
            {"London": [LONDON, LONDON_ONTARIO], "Frederick": [FREDERICK_MD, FREDERICK_CO, FREDERICK_OK]}
        )
        running.routes[FORECAST_PATH] = Reply.json(hourly(series(7)))
        yield running


def ragchat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragchat.cli", "weather", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def test_json_is_the_same_analysis_the_service_returns(server: ReplayServer) -> None:
    result = ragchat("London", "--days", "7", "--json", "--no-explain")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    direct = open_session(get_settings()).app.weather(WeatherRequest(city="London", days=7, explain=False))
    expected = direct.model_dump(mode="json")
    for payload in (printed, expected):
        payload.pop("timings_ms")
    assert printed == expected
    assert printed["place"]["country_code"] == "GB" and len(printed["daily"]) == 7
    assert printed["units"] == {"temperature": "°C", "precipitation": "mm", "wind_speed": "km/h"}
    assert {"volatility", "anomalies", "missingness"} <= set(printed["analytics"])


def test_text_output_shows_place_units_table_and_analytics(server: ReplayServer) -> None:
    result = ragchat("London", "--days", "7", "--no-explain")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("London, England, United Kingdom · 51.5085°N, 0.1257°W · Europe/London")
    assert "units: °C, mm, km/h" in out
    assert "(also matched: 2. London, Ontario, Canada; choose one with --pick N)" in out
    assert out.count("2026-07-") >= 6 and "Anomalies (|z| > 1.5): 2026-07-31" in out
    assert "Missing hourly values: none" in out


def test_an_ambiguous_name_lists_the_candidates_and_pick_chooses(server: ReplayServer) -> None:
    ambiguous = ragchat("Frederick", "--no-explain")
    assert ambiguous.returncode == 1 and ambiguous.stdout == ""
    assert "weather: 'Frederick' matches 3 places; choose one" in ambiguous.stderr
    assert "  2. Frederick, Colorado, United States (40.0992°N, 104.9372°W), population 11,413" in ambiguous.stderr
    assert 'Run again with --pick N or add the region, e.g. "Frederick, Maryland".' in ambiguous.stderr
    as_json = json.loads(ragchat("Frederick", "--json", "--no-explain").stdout)
    assert as_json["error"]["kind"] == "ambiguous" and len(as_json["candidates"]) == 3

    picked = ragchat("Frederick", "--pick", "2", "--no-explain")
    assert picked.returncode == 0 and picked.stdout.startswith("Frederick, Colorado, United States")


def test_failures_are_one_calm_line_with_an_exit_code(server: ReplayServer) -> None:
    unknown = ragchat("Xyzzyqq", "--no-explain")
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "weather: no place called 'Xyzzyqq'"
    invalid = ragchat("Berlin&latitude=1", "--days", "30", "--json")
    assert invalid.returncode == 2
    error = json.loads(invalid.stdout)["error"]
    assert error["kind"] == "invalid_input"
    assert "city: may contain only letters" in error["message"] and "days:" in error["message"]
    server.routes[FORECAST_PATH] = Reply.api_error("Cannot initialize WeatherVariable from invalid String value")
    refused = ragchat("London", "--no-explain")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "HTTP 400: Cannot initialize WeatherVariable from invalid String value" in refused.stderr
    assert "(place: London, England, United Kingdom" in refused.stderr
    assert [r.query.get("name") for r in server.seen if r.path == GEOCODING_PATH].count(["Berlin&latitude=1"]) == 0
