"""The soak bench's RSS figures: growth is measured from the first sample after the warm-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.rss_sampler import RssFigures, RssSampler, rss_figures

REPO = Path(__file__).resolve().parents[2]


def test_growth_is_the_end_over_the_first_sample_after_warm_up() -> None:
    samples = [(0.0, 500.0), (1.0, 1000.0), (2.0, 1150.0), (3.0, 1050.0)]
    figures = rss_figures(samples, warm_at=1.0)
    assert (figures.warm_mib, figures.end_mib, figures.max_mib) == (1000.0, 1050.0, 1150.0)
    assert figures.growth_pct == 5.0  # the warm-up's own growth from 500 MiB is not counted
    assert figures.max_growth_pct == 15.0
    assert figures.samples == 3


def test_no_sample_after_the_warm_up_is_an_error_not_zero_growth() -> None:
    with pytest.raises(ValueError):
        rss_figures([(0.0, 500.0)], warm_at=1.0)


def test_the_series_marks_the_sample_growth_is_measured_from() -> None:
    sampler = RssSampler(every_s=60)
    sampler.samples.extend([(10.0, 500.0), (70.0, 1000.0), (130.0, 1050.0)])
    series = sampler.series(warm_at=40.0)
    assert [(p.minute, p.mib, p.baseline) for p in series] == [
        (0.0, 500.0, False),
        (1.0, 1000.0, True),
        (2.0, 1050.0, False),
    ]
    figures = sampler.figures(warm_at=40.0)
    assert figures.warm_mib == next(p.mib for p in series if p.baseline)


def test_the_sampler_reads_the_process_it_runs_in() -> None:
    """Run in a fresh interpreter: in the suite's own process (gigabytes of models loaded, freed
    heap to reuse, and page cache the kernel may reclaim under a memory limit) a new 64 MiB need not
    show as 64 MiB more RSS; a small new process shows it."""
    child = subprocess.run(
        [sys.executable, "-c", SAMPLED_CHILD],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    figures = RssFigures.model_validate_json(child.stdout)
    assert figures.samples == 3
    assert figures.max_mib - figures.warm_mib > 50


SAMPLED_CHILD = """
import mmap
from bench.rss_sampler import RssSampler
with RssSampler(every_s=60) as sampler:
    warm_at = sampler.samples[0][0]
    held = mmap.mmap(-1, 64 * 1024 * 1024)  # fresh anonymous pages, each one written: resident
    for page in range(0, len(held), mmap.PAGESIZE):
        held[page] = 1
    sampler.sample()
print(sampler.figures(warm_at).model_dump_json())
"""
