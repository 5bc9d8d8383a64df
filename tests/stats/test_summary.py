"""Summary statistics against values worked out by hand."""

from __future__ import annotations

import pytest

from driftcheck.stats.summary import median_ci, percentile, summarize


def test_percentile_interpolates_between_order_statistics() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 50) == 3.0
    assert percentile(values, 90) == pytest.approx(4.6)
    assert percentile(values, 100) == 5.0


def test_median_ci_uses_binomial_ranks() -> None:
    values = [float(i) for i in range(1, 101)]
    # n=100: ranks 50 ± 1.96·√100/2 → 40 and 61 (1-based)
    assert median_ci(values) == (40.0, 61.0)


def test_summarize_reports_spread_and_ci() -> None:
    summary = summarize([10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 20.0])
    assert summary.n == 10
    assert summary.median == 10.0
    assert summary.mad == 0.0
    assert summary.p90 == pytest.approx(11.0)
    assert summary.cv == pytest.approx(0.2874, abs=1e-3)
    # n=10: ranks 1 and 10, so the outlier bounds the interval
    assert (summary.ci_low, summary.ci_high) == (10.0, 20.0)
    assert summary.relative_ci_half_width == 1.0


def test_summarize_needs_samples() -> None:
    with pytest.raises(ValueError):
        summarize([])
