"""How finely two records' run medians can tell a shift: the figures of one run, the spread assumed when no
run-to-run spread was measured, and the minimum detectable shift (MDS) at a level.

The shift between two records is the difference of the mean logs of their run medians; its noise is the
between-run spread pooled over both sides (a t-test on log medians, `driftcheck.stats.comparison`), never
less than what a typical run's own CI says. The verdict wording built on these is driftcheck.analysis.bench_verdicts.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from driftcheck.stats.comparison import ALPHA_CHECK, Resolution, median_resolution

# Spread (standard deviation of log run medians) assumed when neither side measured one. CPU: ten
# unchanged pairs on the idle 2-core reference VM moved by ratios of 0.53-1.57 (issue 6's
# sensitivity run), a log-ratio deviation of ~0.29, so ~0.2 per run; a single-run pair there can
# only call a halving. GPU: not yet measured on one; a few percent of clock wander, doubled.
DEFAULT_SPREAD = {"cpu": 0.20, "cuda": 0.05}
# Between-session spread (sb of driftcheck.stats.sessions) assumed where a host has not measured its own: as
# unknown as one run's, so the same figures. On the quiet 2-core VM three checks minutes after their
# baseline saw a GEMM +29 % to +46 % (issue 36): log ratios of 0.25-0.38, an sb near 0.2 if the baseline's
# session was typical. GPU: not yet measured on one.
DEFAULT_BETWEEN_SESSIONS = DEFAULT_SPREAD
# Records whose MDS is wider than this cannot call a benchmark unchanged: a 25% change could hide.
RESOLVED_MDS = 0.25
# Beyond this MDS (±100%) the records say nothing: no verdict wording beyond "cannot resolve".
UNRESOLVABLE_MDS = 1.0


@dataclass(frozen=True)
class RunFigure:
    """One run's median of one benchmark, with its own relative CI and disturbance, if any."""

    median: float
    ci_rel: float = 0.0
    disturbed: str | None = None
    taken: float | None = None  # share of the machine the disturbance took (None: cannot be quantified)


def logs(figures: Sequence[RunFigure]) -> list[float]:
    """The logs of the run medians: the scale on which shifts are differences and spreads are symmetric."""
    return [math.log(f.median) for f in figures]


def resolution(before: Sequence[RunFigure], after: Sequence[RunFigure], device: str = "cpu",
               alpha: float = ALPHA_CHECK) -> Resolution:
    """How finely these two sets of run medians can tell a shift at level `alpha` (see the module docstring)."""
    # A typical run's own CI (a 95% half-width) is a floor on how well a run median is known. The median
    # run, not the worst: with the worst, every added run could only raise the floor, so more runs could
    # widen the MDS instead of narrowing it.
    within = statistics.median([f.ci_rel for f in (*before, *after)] or [0.0]) / 1.96
    return median_resolution(logs(before), logs(after), within,
                             DEFAULT_SPREAD.get(device, DEFAULT_SPREAD["cpu"]), alpha)
