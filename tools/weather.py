"""The weather tool, both halves.

App side, `run_weather_tool(settings, request)`: builds the job from settings (the only place the
Open-Meteo URLs come from), runs this module in the sandbox, validates what it prints against
WeatherToolResult, and returns the analysis or raises WeatherError with a message fit to show.

Subprocess side, `python -m tools.weather` (started only by the sandbox): reads the job from stdin,
geocodes → resolves the place → fetches hourly data → computes the analytics, prints one JSON result.
Every failure becomes a WeatherFailure with what was valid up to that point (e.g. the resolved place).
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from datetime import date

from pydantic import ValidationError

from core.settings import Settings
from tools.openmeteo_client import HourlyResponse, OpenMeteoClient, OpenMeteoError
from tools.place_resolution import resolve_place
from tools.sandbox import SandboxError, SandboxLimits, run_module
from tools.weather_analytics import analyze
from tools.weather_models import (
    Endpoints,
    HourlySeries,
    Place,
    QualityNote,
    Units,
    WeatherAnalysis,
    WeatherError,
    WeatherFailure,
    WeatherJob,
    WeatherRequest,
    WeatherToolResult,
    request_error_message,
)

log = logging.getLogger(__name__)

EXPECTED_UNITS = {"celsius": "°C", "fahrenheit": "°F", "kmh": "km/h", "ms": "m/s"}


# ----------------------------------------------------------------------------- app side


def run_weather_tool(settings: Settings, request: WeatherRequest) -> WeatherAnalysis:
    """Run the tool in the sandbox; the analysis, validated, or WeatherError."""
    wall = settings.weather_sandbox_timeout_s
    job = WeatherJob(
        request=request,
        endpoints=Endpoints(
            forecast=settings.openmeteo_forecast_url,
            archive=settings.openmeteo_archive_url,
            geocoding=settings.openmeteo_geocoding_url,
        ),
        timeout_s=settings.openmeteo_timeout_s,
        retries=settings.openmeteo_retries,
        max_bytes=settings.openmeteo_max_bytes,
        # The subprocess stops itself a little before the app's kill timer, so a slow server is
        # reported as Open-Meteo's timeout (with the place already resolved) rather than a kill.
        budget_s=wall - min(3.0, wall / 4),
    )
    limits = SandboxLimits(
        wall_s=wall,
        cpu_s=settings.weather_sandbox_cpu_s,
        memory_bytes=settings.weather_sandbox_memory_mb * 1024 * 1024,
    )
    started = time.perf_counter()
    try:
        raw = run_module("tools.weather", job.model_dump(mode="json"), limits, what="the weather tool")
    except SandboxError as exc:
        log.warning("weather sandbox: %s; stderr tail: %s", exc, exc.stderr[-2000:])
        raise WeatherError(WeatherFailure(kind="sandbox", message=str(exc))) from None
    try:
        result = WeatherToolResult.model_validate(raw)
    except ValidationError as exc:
        log.warning("weather tool output failed validation: %s", exc)
        message = f"the weather tool returned data that failed validation ({request_error_message(exc)[:300]})"
        raise WeatherError(WeatherFailure(kind="sandbox", message=message)) from None
    if result.failure is not None:
        raise WeatherError(result.failure)
    assert result.analysis is not None
    analysis = result.analysis.model_copy(update={"request": request})
    analysis.timings_ms["tool_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return analysis


# ----------------------------------------------------------------------------- subprocess side


def run_job(job: WeatherJob) -> WeatherToolResult:
    started = time.monotonic()
    client = OpenMeteoClient(job.endpoints, job.timeout_s, job.retries, job.max_bytes, deadline=started + job.budget_s)
    request = job.request
    timings: dict[str, float] = {}
    place: Place | None = None
    try:
        found = client.geocode(request.place_name, request.country_code)
        timings["geocoding_ms"] = _ms_since(started)
        place, candidates = resolve_place(request, found)
        fetch_started = time.monotonic()
        if request.start is not None and request.end is not None:
            response = client.archive(
                place, request.start, request.end, request.temperature_unit, request.wind_speed_unit
            )
        else:
            assert request.days is not None
            response = client.forecast(place, request.days, request.temperature_unit, request.wind_speed_unit)
        timings["fetch_ms"] = _ms_since(fetch_started)
        analysis_started = time.monotonic()
        analysis = build_analysis(request, place, candidates, response)
    except OpenMeteoError as exc:
        return WeatherToolResult(failure=WeatherFailure(kind=exc.kind, message=str(exc), place=place))
    except WeatherError as exc:
        return WeatherToolResult(failure=exc.failure.model_copy(update={"place": exc.failure.place or place}))
    timings["analysis_ms"] = _ms_since(analysis_started)
    analysis.timings_ms.update(timings)
    return WeatherToolResult(analysis=analysis)


def build_analysis(
    request: WeatherRequest, place: Place, candidates: list[Place], response: HourlyResponse
) -> WeatherAnalysis:
    block = response.hourly
    if block is None or not block.time:
        message = f"Open-Meteo's {request.source} answer holds no hourly data for this period"
        raise WeatherError(WeatherFailure(kind="bad_response", message=message, place=place))
    empty: list[float | None] = [None] * len(block.time)
    hourly = HourlySeries(
        time=block.time,
        temperature=block.temperature_2m if block.temperature_2m is not None else empty,
        precipitation=block.precipitation if block.precipitation is not None else empty,
        wind_speed=block.wind_speed_10m if block.wind_speed_10m is not None else empty,
    )
    daily, analytics, quality = analyze(hourly)
    units, unit_notes = _units(request, response.hourly_units)
    return WeatherAnalysis(
        request=request,
        place=place,
        candidates=candidates,
        source=request.source,
        start=daily[0].date,
        end=daily[-1].date,
        timezone=response.timezone,
        units=units,
        hourly=hourly,
        daily=daily,
        analytics=analytics,
        notes=[*unit_notes, *quality, *_coverage_notes(request, [d.date for d in daily])],
    )


def _units(request: WeatherRequest, reported: dict[str, str]) -> tuple[Units, list[QualityNote]]:
    """The units Open-Meteo says the data is in; a note when they are not what was asked for."""
    wanted = {
        "temperature_2m": EXPECTED_UNITS[request.temperature_unit],
        "precipitation": "mm",
        "wind_speed_10m": EXPECTED_UNITS[request.wind_speed_unit],
    }
    notes, chosen = [], {}
    for key, expected in wanted.items():
        unit = reported.get(key)
        if unit is None:
            notes.append(
                QualityNote(level="note", text=f"Open-Meteo did not report the unit of {key}; assuming {expected}.")
            )
            unit = expected
        elif unit != expected:
            text = f"Open-Meteo reported {key} in {unit}, not the requested {expected}; figures are in {unit}."
            notes.append(QualityNote(level="alert", text=text))
        chosen[key] = unit
    units = Units(
        temperature=chosen["temperature_2m"], precipitation=chosen["precipitation"], wind_speed=chosen["wind_speed_10m"]
    )
    return units, notes


def _coverage_notes(request: WeatherRequest, dates: list[date]) -> list[QualityNote]:
    if request.start is not None and request.end is not None:
        expected = (request.end - request.start).days + 1
        if dates[0] != request.start or dates[-1] != request.end or len(dates) != expected:
            asked = f"{request.start} to {request.end}"
            return [QualityNote(level="note", text=f"The archive returned {dates[0]} to {dates[-1]} for {asked}.")]
        return []
    if request.days is not None and len(dates) != request.days:
        return [QualityNote(level="note", text=f"Open-Meteo returned {len(dates)} days for the {request.days} asked.")]
    return []


def _ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def main() -> int:
    """Subprocess entry point: one job on stdin, one WeatherToolResult on stdout, exit 0."""
    try:
        job = WeatherJob.model_validate_json(sys.stdin.buffer.read())
    except ValidationError as exc:
        result = WeatherToolResult(failure=WeatherFailure(kind="invalid_input", message=request_error_message(exc)))
    else:
        try:
            result = run_job(job)
        except MemoryError:
            raise  # the sandbox's bootstrap turns it into its memory exit code
        except Exception as exc:
            traceback.print_exc()  # stderr: the app logs it; the person sees one line
            failure = WeatherFailure(kind="internal", message=f"unexpected error in the weather tool: {exc}")
            result = WeatherToolResult(failure=failure)
    sys.stdout.write(result.model_dump_json())
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
