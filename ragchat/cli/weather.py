"""`ragchat weather`: weather analytics for a place (the sandboxed Open-Meteo tool), as a table and figures."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ragchat.cli.common import print_json, say_fallback, session_for

if TYPE_CHECKING:
    from ragchat.cli.common import Subcommands
    from tools.weather_models import WeatherAnalysis, WeatherFailure


def add_weather(sub: Subcommands) -> None:
    p = sub.add_parser("weather", help="weather analytics for a place (sandboxed Open-Meteo tool)")
    p.add_argument("city", help='place name, optionally with its region: "Frederick, Maryland"')
    p.add_argument("--days", type=int, default=None, help="forecast days, 1-16 (default 7)")
    p.add_argument("--start", help="first day of a past period, YYYY-MM-DD (archive)")
    p.add_argument("--end", help="last day of a past period, YYYY-MM-DD (archive)")
    p.add_argument("--fahrenheit", action="store_true", help="temperatures in °F instead of °C")
    p.add_argument("--wind-unit", choices=["kmh", "ms"], default="kmh", help="wind speed in km/h or m/s")
    p.add_argument("--country", help="ISO country code to search in, e.g. US")
    p.add_argument("--pick", type=int, help="choose the Nth place when the name is ambiguous")
    p.add_argument("--no-explain", action="store_true", help="skip the LLM's plain-language explanation")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_weather)


def cmd_weather(args: argparse.Namespace) -> int:
    """Weather analytics for a place (the sandboxed Open-Meteo tool). Exit 0 with an analysis, 1 when
    the tool could not produce one (unknown or ambiguous place, Open-Meteo error, timeout), 2 for
    invalid input."""
    from pydantic import ValidationError

    from tools.weather_models import WeatherError, WeatherFailure, WeatherRequest, request_error_message

    try:
        request = WeatherRequest(
            city=args.city,
            days=args.days,
            start=args.start,
            end=args.end,
            temperature_unit="fahrenheit" if args.fahrenheit else "celsius",
            wind_speed_unit=args.wind_unit,
            country_code=args.country,
            pick=args.pick,
            explain=not args.no_explain,
        )
    except ValidationError as exc:
        return _weather_failure(args, WeatherFailure(kind="invalid_input", message=request_error_message(exc)), 2)
    try:
        session = session_for()
        if request.explain:
            say_fallback(session)
        analysis = session.app.weather(request)
    except WeatherError as exc:
        return _weather_failure(args, exc.failure, 2 if exc.kind == "invalid_input" else 1)
    if args.json:
        print_json(analysis.model_dump(mode="json"))
    else:
        _print_weather(analysis)
    return 0


def _weather_failure(args: argparse.Namespace, failure: WeatherFailure, code: int) -> int:
    if args.json:
        print_json(
            {
                "error": {"kind": failure.kind, "message": failure.message},
                **failure.model_dump(mode="json", include={"place", "candidates"}),
            }
        )
        return code
    print(f"weather: {failure.message}", file=sys.stderr)
    if failure.place is not None:
        print(f"(place: {failure.place.label}, {failure.place.coordinates})", file=sys.stderr)
    for number, candidate in enumerate(failure.candidates, start=1):
        population = f", population {candidate.population:,}" if candidate.population else ""
        print(f"  {number}. {candidate.label} ({candidate.coordinates}){population}", file=sys.stderr)
    if failure.candidates:
        example = failure.candidates[0]
        region = example.admin1 or example.country
        hint = f' or add the region, e.g. "{example.name}, {region}"' if region else ""
        print(f"Run again with --pick N{hint}.", file=sys.stderr)
    return code


def _print_weather(analysis: WeatherAnalysis) -> None:
    a, u = analysis.analytics, analysis.units
    period = "Forecast" if analysis.source == "forecast" else "Archive"
    print(f"{analysis.place.label} · {analysis.place.coordinates} · {analysis.timezone}")
    print(
        f"{period} {analysis.start} to {analysis.end} ({len(analysis.daily)} days); "
        f"units: {u.temperature}, {u.precipitation}, {u.wind_speed}"
    )
    others = [f"{n}. {p.label}" for n, p in enumerate(analysis.candidates, start=1) if p != analysis.place]
    if others:
        print(f"(also matched: {'; '.join(others)}; choose one with --pick N)")
    print()
    header = ["date", "mean", "max", "min", "3-day", "precip", "wind avg", "wind max"]
    print("  ".join(f"{h:>10}" for h in header))
    for d in analysis.daily:
        cells = [
            d.temperature_mean,
            d.temperature_max,
            d.temperature_min,
            d.temperature_mean_3d,
            d.precipitation_total,
            d.wind_speed_mean,
            d.wind_speed_max,
        ]
        print("  ".join([f"{d.date!s:>10}", *(f"{'–' if c is None else f'{c:.1f}':>10}" for c in cells)]))
    print()
    if a.temperature_mean is not None:
        spread = "" if a.volatility is None else f" · volatility (σ of daily means) {a.volatility:.2f} {u.temperature}"
        print(f"Average temperature {a.temperature_mean:.1f} {u.temperature}{spread}")
    for label, extreme, unit in (
        ("Highest temperature", a.temperature_max, u.temperature),
        ("Lowest temperature", a.temperature_min, u.temperature),
        ("Strongest wind", a.wind_speed_max, u.wind_speed),
    ):
        if extreme is not None:
            print(f"{label} {extreme.value:.1f} {unit} on {extreme.time:%Y-%m-%d %H:%M}")
    if a.precipitation_total is not None:
        print(f"Total precipitation {a.precipitation_total:.1f} {u.precipitation}")
    if a.wind_speed_mean is not None:
        print(f"Average wind {a.wind_speed_mean:.1f} {u.wind_speed}")
    anomalies = ", ".join(
        f"{x.date} ({x.temperature_mean:.1f} {u.temperature}, z {x.z_score:+.2f})" for x in a.anomalies
    )
    print(f"Anomalies (|z| > {a.anomaly_threshold:g}): {anomalies or 'none'}")
    missing = ", ".join(f"{m.variable.replace('_', ' ')} {m.percent:g}%" for m in a.missingness if m.missing)
    print(f"Missing hourly values: {missing or 'none'}")
    for note in analysis.notes:
        print(f"  {'!' if note.level == 'alert' else '-'} {note.text}")
    if analysis.explanation:
        print(f"\n{analysis.explanation}")
        print(f"(explained by {analysis.explanation_model} from the figures above)", file=sys.stderr)
    if analysis.explanation_note:
        print(f"({analysis.explanation_note})", file=sys.stderr)
