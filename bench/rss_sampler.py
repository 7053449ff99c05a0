"""This process's resident memory, sampled on a timer, and what the samples say about growth.

Read from /proc/self/status (Linux), so the figure is the RSS the kernel charges the process:
llama.cpp's and ONNX's native allocations included, which Python's own allocator statistics miss.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel

STATUS = Path("/proc/self/status")


def rss_mib() -> float:
    """The current resident set size of this process, in MiB."""
    for line in STATUS.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS line in {STATUS}")


class RssFigures(BaseModel):
    """RSS after warm-up against the rest of the run. Growth is the end over the warm-up figure, so a
    peak that was given back (a large ingest's buffers) is not counted as a leak; max_growth_pct
    shows that peak."""

    warm_mib: float
    end_mib: float
    max_mib: float
    growth_pct: float
    max_growth_pct: float
    samples: int


class RssPoint(BaseModel):
    """One sample of the run, for plotting whether RSS levelled off or still rose."""

    minute: float  # since the first sample
    mib: float
    baseline: bool  # the sample growth is measured from


def _after_warm_up(samples: list[tuple[float, float]], warm_at: float) -> list[tuple[float, float]]:
    """The samples taken at or after `warm_at`; the first of them is the baseline. ValueError when
    no sample is that late."""
    after = [(at, mib) for at, mib in samples if at >= warm_at]
    if not after:
        raise ValueError("no RSS sample was taken after the warm-up")
    return after


def rss_figures(samples: list[tuple[float, float]], warm_at: float) -> RssFigures:
    """`samples`: (monotonic time, MiB), in time order; `warm_at`: when the warm-up ended. The warm
    figure is the first sample taken at or after it. ValueError when no sample is that late."""
    after = [mib for _, mib in _after_warm_up(samples, warm_at)]
    warm, end, peak = after[0], after[-1], max(after)
    return RssFigures(
        warm_mib=round(warm, 1),
        end_mib=round(end, 1),
        max_mib=round(peak, 1),
        growth_pct=round((end - warm) / warm * 100, 1),
        max_growth_pct=round((peak - warm) / warm * 100, 1),
        samples=len(after),
    )


class RssSampler:
    """A daemon thread that samples RSS every `every_s` seconds while the `with` block runs (and once
    on entry and exit); `sample()` adds one now (e.g. at the end of a warm-up)."""

    def __init__(self, every_s: float) -> None:
        self.every_s = every_s
        self.samples: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def sample(self) -> float:
        mib = rss_mib()
        with self._lock:
            self.samples.append((time.monotonic(), mib))
        return mib

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def __enter__(self) -> RssSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def figures(self, warm_at: float) -> RssFigures:
        with self._lock:
            return rss_figures(list(self.samples), warm_at)

    def series(self, warm_at: float) -> list[RssPoint]:
        """Every sample so far, the baseline `figures` measures from marked."""
        with self._lock:
            samples = list(self.samples)
        baseline = _after_warm_up(samples, warm_at)[0][0]
        return [
            RssPoint(minute=round((at - samples[0][0]) / 60, 2), mib=round(mib, 1), baseline=at == baseline)
            for at, mib in samples
        ]
