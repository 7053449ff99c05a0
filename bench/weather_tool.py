"""What the weather tool's sandbox costs: the same job in process and in the sandboxed subprocess.

A 127.0.0.1 server (the tests' replay server) answers geocoding and a forecast of --days days of
hourly data, so the network is local and identical for both. Then, alternating so machine load hits
both alike, --runs times each:

* in process: ``tools.weather.run_job(job)``, the subprocess's own work (HTTP, validation, analytics);
* sandboxed: ``tools.weather.run_weather_tool(settings, request)``, what App.weather calls
  (start ``python -I``, set the rlimits, import, the same job, JSON out, validation in the app).

Prints medians and p90 of each, the sandbox's overhead (difference and ratio), the largest peak RSS of
any sandboxed child (``RUSAGE_CHILDREN``) against the memory limit, and one JSON line with it all. No
LLM runs. Timings are wall-clock on whatever else the machine is doing; the load average is printed.

    .venv/bin/python bench/weather_tool.py
    .venv/bin/python bench/weather_tool.py --runs 20 --days 16
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytest

from core.settings import get_settings
from tests.openmeteo_replay import (
    FORECAST_PATH,
    GEOCODING_PATH,
    LONDON,
    LONDON_ONTARIO,
    Reply,
    geocoding,
    hourly,
    replay,
    series,
)
from tools.weather import run_job, run_weather_tool
from tools.weather_models import Endpoints, WeatherJob, WeatherRequest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--days", type=int, default=16)
    args = parser.parse_args()

    monkeypatch = pytest.MonkeyPatch()
    with tempfile.TemporaryDirectory() as home, replay(monkeypatch) as server:
        monkeypatch.setenv("RAGCHAT_HOME", home)
        monkeypatch.setenv("RAGCHAT_WEATHER_SANDBOX_TIMEOUT_S", "60")
        server.routes[GEOCODING_PATH] = Reply.json(geocoding(LONDON, LONDON_ONTARIO))
        server.routes[FORECAST_PATH] = Reply.json(hourly(series(args.days)))
        settings = get_settings()
        request = WeatherRequest(city="London", days=args.days, explain=False)
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
            budget_s=30,
        )
        run_job(job)  # warm the in-process imports and connection code once
        inproc, sandboxed = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            assert run_job(job).analysis is not None
            inproc.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            run_weather_tool(settings, request)
            sandboxed.append((time.perf_counter() - started) * 1000)
        monkeypatch.undo()

    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    figures = {
        "runs": args.runs,
        "hours": args.days * 24,
        "load_average": os.getloadavg(),
        "in_process_ms": {"median": statistics.median(inproc), "p90": _p90(inproc)},
        "sandboxed_ms": {"median": statistics.median(sandboxed), "p90": _p90(sandboxed)},
        "overhead_ms": statistics.median(sandboxed) - statistics.median(inproc),
        "ratio": statistics.median(sandboxed) / statistics.median(inproc),
        "child_peak_rss_mib": peak_mib,
        "memory_limit_mib": settings.weather_sandbox_memory_mb,
    }
    print(f"load average {figures['load_average'][0]:.2f}; {args.runs} runs, {args.days} days = {args.days * 24} hours")
    print(f"{'':12} {'median ms':>10} {'p90 ms':>8}")
    print(f"{'in process':12} {figures['in_process_ms']['median']:>10.1f} {figures['in_process_ms']['p90']:>8.1f}")
    print(f"{'sandboxed':12} {figures['sandboxed_ms']['median']:>10.1f} {figures['sandboxed_ms']['p90']:>8.1f}")
    print(f"sandbox overhead {figures['overhead_ms']:.0f} ms (×{figures['ratio']:.1f})")
    print(
        f"largest child peak RSS {peak_mib:.0f} MiB (limit on address space {settings.weather_sandbox_memory_mb} MiB)"
    )
    print(json.dumps(figures))


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
