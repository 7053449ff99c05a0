"""The prompt holds the computed figures with units; replies are trimmed and their numbers checked."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.openmeteo_replay import LONDON
from tools.weather_analytics import analyze
from tools.weather_explanation import explanation_messages, facts, unsupported_numbers, whole_sentences
from tools.weather_models import HourlySeries, Place, Units, WeatherAnalysis, WeatherRequest


def analysis() -> WeatherAnalysis:
    time = [datetime(2026, 7, 26) + timedelta(hours=h) for h in range(72)]
    temperature = [15.0 + (h % 24) / 4 + (8.0 if h // 24 == 2 else 0.0) for h in range(72)]
    hourly = HourlySeries(
        time=time, temperature=temperature, precipitation=[0.5] * 72, wind_speed=[None] * 12 + [12.0] * 60
    )
    daily, analytics, notes = analyze(hourly)
    return WeatherAnalysis(
        request=WeatherRequest(city="London", days=3),
        place=Place.model_validate(LONDON),
        source="forecast",
        start=daily[0].date,
        end=daily[-1].date,
        timezone="Europe/London",
        units=Units(temperature="°F", wind_speed="m/s"),
        hourly=hourly,
        daily=daily,
        analytics=analytics,
        notes=notes,
    )


def test_facts_carry_the_computed_figures_with_their_units() -> None:
    a = analysis()
    text = facts(a)
    assert f"Average of the daily mean temperatures: {a.analytics.temperature_mean:g} °F" in text
    assert f"(standard deviation of daily means): {a.analytics.volatility:g} °F" in text
    assert "Highest temperature: 28.75 °F on 2026-07-28 at 23:00" in text
    assert "Total precipitation: 36 mm" in text and "Average wind speed: 12 m/s" in text
    assert "Missing data: wind speed 16.67% missing" in text
    system, user = explanation_messages(a)
    assert system.role == "system" and "Never calculate" in system.content
    assert user.content.startswith("Weather figures for London, England, United Kingdom:\n- Place:")


def test_numbers_not_in_the_facts_are_flagged() -> None:
    given = "Highest temperature: 28.75 °F on 2026-07-28 at 23:00\nTotal precipitation: 36 mm"
    reply = "It peaks at 28.75 °F on July 28 at 23:00, with 36.0 mm of rain, about 40 mm less than usual."
    assert unsupported_numbers(reply, given) == ["40"]
    assert unsupported_numbers("Rain: 36 mm.", given) == []


def test_a_reply_cut_by_the_token_limit_keeps_its_whole_sentences() -> None:
    assert (
        whole_sentences("It is warm. Rain falls on the 27th. The wind reaches 2")
        == "It is warm. Rain falls on the 27th."
    )
    assert whole_sentences("  Mild and dry!  ") == "Mild and dry!"
    assert whole_sentences("no full stop at all") == "no full stop at all"
