"""Pure computations on validated hourly data: no I/O, no LLM. Every figure the tool shows comes from here.

Days are local calendar days (Open-Meteo returns local wall-clock times with `timezone=auto`). A day's
figures use the hours that have a value; a missing hour is never treated as zero. Results are rounded
to 2 decimals only at the end, so rounding never feeds into a later figure.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timedelta

from tools.weather_models import (
    Anomaly,
    DailyStats,
    Extreme,
    HourlySeries,
    Missingness,
    QualityNote,
    WeatherAnalytics,
)

ANOMALY_Z = 1.5  # a day is an anomaly when its mean temperature is more than 1.5 σ from the period mean
ROLLING_DAYS = 3
MISSING_ALERT_PERCENT = 10.0  # from this share of missing hourly values on, a variable gets an alert
MAX_DAY_NOTES = 5
VARIABLE_LABELS = {"temperature": "temperature", "precipitation": "precipitation", "wind_speed": "wind speed"}

Values = Sequence[float | None]


def analyze(hourly: HourlySeries) -> tuple[list[DailyStats], WeatherAnalytics, list[QualityNote]]:
    """Daily aggregates, period analytics and data-quality notes (alerts first)."""
    daily = daily_stats(hourly)
    means = [d.temperature_mean for d in daily]
    missing = missingness(hourly)
    analytics = WeatherAnalytics(
        temperature_mean=_round(_mean(means)),
        temperature_max=_extreme(hourly.time, hourly.temperature, max),
        temperature_min=_extreme(hourly.time, hourly.temperature, min),
        precipitation_total=_round(_sum(hourly.precipitation)),
        wind_speed_mean=_round(_mean(hourly.wind_speed)),
        wind_speed_max=_extreme(hourly.time, hourly.wind_speed, max),
        volatility=_round(volatility(means)),
        anomaly_threshold=ANOMALY_Z,
        anomalies=anomalies([d.date for d in daily], means),
        missingness=missing,
    )
    return _rounded(daily), analytics, quality_notes(hourly, daily, missing)


def daily_stats(hourly: HourlySeries) -> list[DailyStats]:
    """One row per local day, in time order, with the trailing 3-day mean of the daily means."""
    days: dict[date, list[int]] = {}
    for index, moment in enumerate(hourly.time):
        days.setdefault(moment.date(), []).append(index)
    rows: list[DailyStats] = []
    for day, indexes in days.items():
        temps = [hourly.temperature[i] for i in indexes]
        winds = [hourly.wind_speed[i] for i in indexes]
        present = [t for t in temps if t is not None]
        rows.append(
            DailyStats(
                date=day,
                temperature_mean=_mean(temps),
                temperature_max=max(present) if present else None,
                temperature_min=min(present) if present else None,
                precipitation_total=_sum([hourly.precipitation[i] for i in indexes]),
                wind_speed_mean=_mean(winds),
                wind_speed_max=max((w for w in winds if w is not None), default=None),
                temperature_mean_3d=None,
                hours=len(indexes),
                temperature_hours=len(present),
            )
        )
    for row, rolled in zip(rows, rolling_mean([r.temperature_mean for r in rows]), strict=True):
        row.temperature_mean_3d = rolled
    return rows


def rolling_mean(values: Values, window: int = ROLLING_DAYS) -> list[float | None]:
    """Trailing mean over `window` values ending at each position; None until a full window of values
    exists, and None where any value in the window is missing (a gap is not averaged over)."""
    out: list[float | None] = []
    for end in range(len(values)):
        chunk = values[max(0, end - window + 1) : end + 1]
        full = len(chunk) == window and all(v is not None for v in chunk)
        out.append(statistics.fmean(v for v in chunk if v is not None) if full else None)
    return out


def volatility(values: Values) -> float | None:
    """Population standard deviation of the known values; None with fewer than two."""
    known = [v for v in values if v is not None]
    return statistics.pstdev(known) if len(known) >= 2 else None


def anomalies(days: Sequence[date], values: Values, threshold: float = ANOMALY_Z) -> list[Anomaly]:
    """Days whose value is more than `threshold` population standard deviations from the mean."""
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return []
    mean, sigma = statistics.fmean(known), statistics.pstdev(known)
    if sigma == 0:
        return []
    found = []
    for day, value in zip(days, values, strict=True):
        if value is not None and abs(z := (value - mean) / sigma) > threshold:
            found.append(Anomaly(date=day, temperature_mean=round(value, 2), z_score=round(z, 2)))
    return found


def missingness(hourly: HourlySeries) -> list[Missingness]:
    total = len(hourly.time)
    rows = []
    for variable in ("temperature", "precipitation", "wind_speed"):
        missing = sum(v is None for v in getattr(hourly, variable))
        percent = 100.0 * missing / total if total else 100.0
        rows.append(
            Missingness(
                variable=variable,
                missing=missing,
                total=total,
                percent=round(percent, 2),
                alert=percent >= MISSING_ALERT_PERCENT,
            )
        )
    return rows


def quality_notes(hourly: HourlySeries, daily: list[DailyStats], missing: list[Missingness]) -> list[QualityNote]:
    """Plain sentences about what is missing or irregular, alerts first."""
    alerts: list[str] = []
    notes: list[str] = []
    for m in missing:
        label = VARIABLE_LABELS[m.variable]
        if m.missing == m.total:
            alerts.append(f"No {label} data came back: its figures are not available.")
        elif m.alert:
            alerts.append(
                f"{label.capitalize()}: {m.missing} of {m.total} hourly values ({m.percent:g}%) are missing; "
                "treat its figures with caution."
            )
        elif m.missing:
            notes.append(
                f"{label.capitalize()}: {m.missing} of {m.total} hourly values ({m.percent:g}%) are missing; "
                "daily figures use the hours that have data."
            )
    partial = [d for d in daily if 0 < d.temperature_hours < d.hours]
    empty = [d for d in daily if d.temperature_hours == 0]
    if empty and len(empty) < len(daily):
        notes.append(f"No temperature at all on {_list_days(empty)}.")
    if partial:
        notes.append(
            "Temperature only for part of "
            + _list_days(partial, lambda d: f"{d.date} ({d.temperature_hours} of {d.hours} h)")
            + "."
        )
    steps = [b - a for a, b in zip(hourly.time, hourly.time[1:], strict=False)]
    irregular = sum(step != timedelta(hours=1) for step in steps)
    if irregular:
        notes.append(f"{irregular} step(s) in the hourly times are not one hour apart (for example a clock change).")
    return [QualityNote(level="alert", text=t) for t in alerts] + [QualityNote(level="note", text=t) for t in notes]


def _list_days(days: list[DailyStats], text: Callable[[DailyStats], str] = lambda d: str(d.date)) -> str:
    shown = ", ".join(text(d) for d in days[:MAX_DAY_NOTES])
    more = len(days) - MAX_DAY_NOTES
    return shown + (f" and {more} more day(s)" if more > 0 else "")


def _mean(values: Values) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def _sum(values: Values) -> float | None:
    known = [v for v in values if v is not None]
    return math.fsum(known) if known else None


def _extreme(times: Sequence[datetime], values: Values, pick: Callable[[Iterable[float]], float]) -> Extreme | None:
    """The highest (or lowest) known value and the first hour it occurred."""
    known = [(v, t) for t, v in zip(times, values, strict=True) if v is not None]
    if not known:
        return None
    best = pick(v for v, _ in known)
    return Extreme(value=round(best, 2), time=next(t for v, t in known if v == best))


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _rounded(rows: list[DailyStats]) -> list[DailyStats]:
    fields = (
        "temperature_mean",
        "temperature_max",
        "temperature_min",
        "precipitation_total",
        "wind_speed_mean",
        "wind_speed_max",
        "temperature_mean_3d",
    )
    return [row.model_copy(update={f: _round(getattr(row, f)) for f in fields}) for row in rows]
