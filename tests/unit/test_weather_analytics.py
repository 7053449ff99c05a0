"""The analytics against a computation written out in the test: plain loops and the textbook formulas,
not the module's helpers or the statistics module it uses."""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta

import pytest

from tools.weather_analytics import analyze, anomalies, rolling_mean
from tools.weather_models import HourlySeries

START = datetime(2026, 3, 1)
DAYS = 6


def sample() -> HourlySeries:
    """6 days: a daily cycle on a rising base, a warm spike on day 4, gaps of every kind."""
    time = [START + timedelta(hours=h) for h in range(DAYS * 24)]
    base = [5.0, 6.5, 7.0, 16.0, 6.0, 5.5]
    temperature: list[float | None] = [
        round(base[h // 24] + 3 * math.sin((h % 24 - 9) / 24 * 2 * math.pi), 2) for h in range(DAYS * 24)
    ]
    precipitation: list[float | None] = [0.2 * (h % 5 == 0) + (1.5 if 30 <= h < 34 else 0.0) for h in range(DAYS * 24)]
    wind: list[float | None] = [10 + (h % 11) * 0.7 for h in range(DAYS * 24)]
    for h in (50, 51, 52, 53):  # day 3: four hours without temperature
        temperature[h] = None
    for h in range(96, 120):  # day 5: no precipitation at all
        precipitation[h] = None
    for h in range(0, 144, 3):  # every third wind value missing: 33%, an alert
        wind[h] = None
    return HourlySeries(time=time, temperature=temperature, precipitation=precipitation, wind_speed=wind)


def by_day(series: HourlySeries, values: list[float | None]) -> dict[date, list[float]]:
    days: dict[date, list[float]] = {}
    for moment, value in zip(series.time, values, strict=True):
        days.setdefault(moment.date(), [])
        if value is not None:
            days[moment.date()].append(value)
    return days


def population_std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def test_daily_aggregates_rolling_mean_volatility_and_anomalies() -> None:
    series = sample()
    daily, analytics, _ = analyze(series)

    temps = by_day(series, series.temperature)
    rain = by_day(series, series.precipitation)
    wind = by_day(series, series.wind_speed)
    days = sorted(temps)
    assert [d.date for d in daily] == days
    means = [sum(temps[d]) / len(temps[d]) for d in days]
    for row, day, mean in zip(daily, days, means, strict=True):
        assert row.temperature_mean == pytest.approx(mean, abs=0.006)
        assert row.temperature_max == pytest.approx(max(temps[day]), abs=0.006)
        assert row.temperature_min == pytest.approx(min(temps[day]), abs=0.006)
        expected_rain = sum(rain[day]) if rain[day] else None
        assert row.precipitation_total == (None if expected_rain is None else pytest.approx(expected_rain, abs=0.006))
        assert row.wind_speed_mean == pytest.approx(sum(wind[day]) / len(wind[day]), abs=0.006)
        assert row.wind_speed_max == pytest.approx(max(wind[day]), abs=0.006)
        assert row.hours == 24 and row.temperature_hours == len(temps[day])
    assert daily[2].temperature_hours == 20
    assert daily[4].precipitation_total is None  # no value is not zero rain

    # Trailing 3-day mean: None for the first two days, then the mean of this day and the two before.
    assert daily[0].temperature_mean_3d is None and daily[1].temperature_mean_3d is None
    for i in range(2, DAYS):
        assert daily[i].temperature_mean_3d == pytest.approx(sum(means[i - 2 : i + 1]) / 3, abs=0.006)

    period_mean = sum(means) / len(means)
    sigma = population_std(means)
    assert analytics.temperature_mean == pytest.approx(period_mean, abs=0.006)
    assert analytics.volatility == pytest.approx(sigma, abs=0.006)
    expected = [(days[i], (m - period_mean) / sigma) for i, m in enumerate(means) if abs(m - period_mean) > 1.5 * sigma]
    assert expected and expected[0][0] == date(2026, 3, 4)  # the warm spike, and only it
    assert [(a.date, a.z_score) for a in analytics.anomalies] == [
        (day, pytest.approx(z, abs=0.006)) for day, z in expected
    ]
    assert analytics.anomaly_threshold == 1.5

    all_temps = [t for t in series.temperature if t is not None]
    assert analytics.temperature_max is not None and analytics.temperature_max.value == pytest.approx(max(all_temps))
    hottest = series.time[series.temperature.index(max(all_temps))]
    assert analytics.temperature_max.time == hottest
    assert analytics.temperature_min is not None and analytics.temperature_min.value == pytest.approx(min(all_temps))
    known_rain = [p for p in series.precipitation if p is not None]
    assert analytics.precipitation_total == pytest.approx(sum(known_rain), abs=0.006)
    known_wind = [w for w in series.wind_speed if w is not None]
    assert analytics.wind_speed_mean == pytest.approx(sum(known_wind) / len(known_wind), abs=0.006)
    assert analytics.wind_speed_max is not None and analytics.wind_speed_max.value == pytest.approx(max(known_wind))


def test_missingness_percentages_alerts_and_notes() -> None:
    series = sample()
    _, analytics, notes = analyze(series)
    missing = {m.variable: m for m in analytics.missingness}
    total = DAYS * 24
    assert missing["temperature"].missing == 4 and missing["temperature"].total == total
    assert missing["temperature"].percent == pytest.approx(100 * 4 / total, abs=0.006)
    assert missing["precipitation"].percent == pytest.approx(100 * 24 / total, abs=0.006)
    assert missing["wind_speed"].percent == pytest.approx(100 * 48 / total, abs=0.006)
    assert [m.alert for m in analytics.missingness] == [False, True, True]  # alert from 10% on

    alerts = [n.text for n in notes if n.level == "alert"]
    infos = [n.text for n in notes if n.level == "note"]
    assert [n.level for n in notes] == sorted((n.level for n in notes), key=lambda level: level != "alert")
    assert any(t.startswith("Precipitation: 24 of 144") for t in alerts)
    assert any(t.startswith("Wind speed: 48 of 144") for t in alerts)
    assert any(t.startswith("Temperature: 4 of 144") for t in infos)
    assert any("2026-03-03 (20 of 24 h)" in t for t in infos)


def test_a_variable_with_no_data_gives_none_and_an_alert_not_zeros() -> None:
    series = sample()
    series = series.model_copy(update={"wind_speed": [None] * len(series.time)})
    daily, analytics, notes = analyze(series)
    assert all(d.wind_speed_mean is None and d.wind_speed_max is None for d in daily)
    assert analytics.wind_speed_mean is None and analytics.wind_speed_max is None
    assert analytics.temperature_mean is not None  # the other variables are still valid
    assert "No wind speed data came back: its figures are not available." in [n.text for n in notes]


def test_irregular_time_steps_are_noted() -> None:
    time = [START + timedelta(hours=h) for h in (0, 1, 2, 4, 5)]
    series = HourlySeries(time=time, temperature=[1.0] * 5, precipitation=[0.0] * 5, wind_speed=[3.0] * 5)
    _, _, notes = analyze(series)
    assert any(n.text.startswith("1 step(s) in the hourly times") for n in notes)


def test_rolling_mean_needs_a_full_window_without_gaps() -> None:
    assert rolling_mean([1.0, 2.0, 3.0, None, 5.0, 6.0, 7.0]) == [None, None, 2.0, None, None, None, 6.0]


def test_no_anomalies_when_every_day_is_the_same_or_too_few_days() -> None:
    days = [date(2026, 1, d) for d in range(1, 5)]
    assert anomalies(days, [3.0, 3.0, 3.0, 3.0]) == []
    assert anomalies(days[:1], [3.0]) == []
    found = anomalies(days, [0.0, 0.0, 0.0, 10.0])  # mean 2.5, σ 4.33: z = 1.73 for the last day only
    assert [(a.date, a.z_score) for a in found] == [(days[3], pytest.approx(7.5 / math.sqrt(18.75), abs=0.006))]
