"""Input validation of the weather tool, and the rule for which Open-Meteo URLs a setting may hold."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.settings import get_settings
from tools.weather_models import WeatherRequest, request_error_message


def error_of(**fields: object) -> str:
    with pytest.raises(ValidationError) as caught:
        WeatherRequest(**fields)
    return request_error_message(caught.value)


def test_a_forecast_request_defaults_to_seven_days() -> None:
    request = WeatherRequest(city="  London  ")
    assert request.city == "London" and request.days == 7 and request.source == "forecast"
    assert request.temperature_unit == "celsius" and request.wind_speed_unit == "kmh"


@pytest.mark.parametrize("city", ["Zürich", "São Paulo", "St. John's", "Halle (Saale)", "Xi’an", "Frederick, Maryland"])
def test_real_place_names_are_accepted(city: str) -> None:
    assert WeatherRequest(city=city).city == city


def test_combining_marks_are_letters_too() -> None:
    decomposed = "Zu\u0308rich"  # u + combining diaeresis
    assert WeatherRequest(city=decomposed).city == decomposed


@pytest.mark.parametrize(
    ("city", "bad"),
    [
        ("Berlin&latitude=52.5", "'&' '='"),
        ("../../v1/forecast", "'/'"),
        ("London?x=1", "'=' '?'"),
        ("Paris#frag", "'#'"),
        ("Rome%26", "'%'"),
    ],
)
def test_characters_that_could_shape_a_url_are_refused(city: str, bad: str) -> None:
    message = error_of(city=city)
    assert message.startswith("city: may contain only letters, digits, spaces and")
    assert f"(not {bad})" in message


def test_name_length_and_content() -> None:
    assert "at least 2 characters" in error_of(city="x")
    assert "at most 100 characters" in error_of(city="a" * 101)
    assert "must contain letters" in error_of(city="1234")
    assert "needs at least 2 characters" in error_of(city="A, Maryland")


def test_days_range() -> None:
    assert "days: Input should be greater than or equal to 1" in error_of(city="Oslo", days=0)
    assert "days: Input should be less than or equal to 16" in error_of(city="Oslo", days=17)
    assert WeatherRequest(city="Oslo", days=16).days == 16


def test_past_ranges_use_the_archive_and_are_checked() -> None:
    yesterday = date.today() - timedelta(days=1)
    request = WeatherRequest(city="Oslo", start=yesterday - timedelta(days=3), end=yesterday)
    assert request.source == "archive" and request.days is None
    assert "needs both a start and an end" in error_of(city="Oslo", start=yesterday)
    assert "is after the end date" in error_of(city="Oslo", start=yesterday, end=yesterday - timedelta(days=1))
    assert "must lie in the past" in error_of(city="Oslo", start=yesterday, end=date.today())
    assert "at most 366 days" in error_of(city="Oslo", start=yesterday - timedelta(days=366), end=yesterday)
    assert "either a number of forecast days or a past date range" in error_of(
        city="Oslo", days=3, start=yesterday, end=yesterday
    )
    assert "the archive starts on 1940-01-01" in error_of(city="Oslo", start=date(1939, 12, 31), end=date(1940, 1, 2))


def test_qualifiers_and_unknown_fields() -> None:
    request = WeatherRequest(city="Frederick, Maryland, US")
    assert request.place_name == "Frederick" and request.qualifiers == ["Maryland", "US"]
    assert "url: Extra inputs are not permitted" in error_of(city="Oslo", url="http://evil.example")
    assert "country_code" in error_of(city="Oslo", country_code="USA")


# ----------------------------------------------------------------------------- endpoint settings


@pytest.mark.parametrize(
    "url",
    [
        "https://api.open-meteo.com/v1/forecast",
        "http://127.0.0.1:8765/v1/forecast",
        "http://127.5.0.1/v1/search",
        "http://[::1]:8080/v1/archive",
        "http://localhost:9000/v1/search",
    ],
)
def test_https_or_a_loopback_host(url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_OPENMETEO_FORECAST_URL", url)
    assert get_settings().openmeteo_forecast_url == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://api.open-meteo.com/v1/forecast", "must use https"),
        ("http://10.0.0.5/v1/forecast", "must use https"),
        ("http://127.0.0.1.evil.example/v1/forecast", "must use https"),
        ("ftp://api.open-meteo.com/v1/forecast", "must use https"),
        ("https://user:secret@api.open-meteo.com/v1/forecast", "must not carry credentials"),
        ("https://api.open-meteo.com/v1/forecast?latitude=1", "must not carry credentials, a query"),
        ("https:///v1/forecast", "has no host"),
    ],
)
def test_other_urls_are_refused(url: str, why: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGCHAT_OPENMETEO_GEOCODING_URL", url)
    with pytest.raises(ValidationError, match=why):
        get_settings()


def test_defaults_are_the_public_https_endpoints(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("FORECAST", "ARCHIVE", "GEOCODING"):
        monkeypatch.delenv(f"RAGCHAT_OPENMETEO_{name}_URL", raising=False)
    settings = get_settings()
    assert settings.openmeteo_forecast_url == "https://api.open-meteo.com/v1/forecast"
    assert settings.openmeteo_archive_url == "https://archive-api.open-meteo.com/v1/archive"
    assert settings.openmeteo_geocoding_url == "https://geocoding-api.open-meteo.com/v1/search"
