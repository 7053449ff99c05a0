"""The soak bench's RSS figures: growth is measured from the first sample after the warm-up."""

from __future__ import annotations

import pytest

from bench.rss_sampler import RssSampler, rss_figures


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


def test_the_sampler_reads_this_process() -> None:
    with RssSampler(every_s=60) as sampler:
        warm_at = sampler.samples[0][0]
        held = bytearray(64 * 1024 * 1024)  # 64 MiB, touched: resident
        held[::4096] = b"x" * len(held[::4096])
        sampler.sample()
    figures = sampler.figures(warm_at)
    assert figures.samples == 3
    assert figures.max_mib - figures.warm_mib > 50
    del held
