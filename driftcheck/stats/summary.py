"""Summary statistics of benchmark samples: robust (median, MAD, percentiles) and distribution-free.

The confidence interval of the median comes from order statistics (the binomial method), so it holds
whatever the shape of the timing distribution: timings are skewed, never normal.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Z_95 = 1.959963984540054


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, linearly interpolated."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def median_ci(sorted_values: Sequence[float], z: float = Z_95) -> tuple[float, float]:
    """A distribution-free confidence interval of the median (95% by default) from order statistics."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("no values")
    half_width = z * math.sqrt(n) / 2.0
    low_rank = max(1, math.floor(n / 2.0 - half_width))
    high_rank = min(n, math.ceil(1 + n / 2.0 + half_width))
    return sorted_values[low_rank - 1], sorted_values[high_rank - 1]


@dataclass(frozen=True)
class Summary:
    """What a series of samples says: centre, spread and the 95% CI of the median."""

    n: int
    median: float
    p10: float
    p90: float
    mad: float
    cv: float
    ci_low: float
    ci_high: float

    @property
    def relative_ci_half_width(self) -> float:
        """The larger half of the CI of the median, relative to the median (0.01 = ±1%)."""
        if self.median == 0:
            return math.inf
        return max(self.median - self.ci_low, self.ci_high - self.median) / abs(self.median)

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "median": self.median, "p10": self.p10, "p90": self.p90, "mad": self.mad,
                "cv": self.cv, "ci_low": self.ci_low, "ci_high": self.ci_high}


def summarize(samples: Sequence[float]) -> Summary:
    """The Summary of `samples` (at least one). CV is stdev/mean (0 for a single sample)."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("no samples to summarize")
    median = statistics.median(ordered)
    mad = statistics.median(abs(x - median) for x in ordered)
    mean = statistics.fmean(ordered)
    cv = statistics.stdev(ordered) / abs(mean) if len(ordered) > 1 and mean else 0.0
    ci_low, ci_high = median_ci(ordered)
    return Summary(n=len(ordered), median=median, p10=percentile(ordered, 10), p90=percentile(ordered, 90),
                   mad=mad, cv=cv, ci_low=ci_low, ci_high=ci_high)
