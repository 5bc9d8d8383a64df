"""Is one member outside its group: the prediction interval for one new member from k others.

A fleet asks of each host whether its speed lies outside what the other hosts' speeds predict for one more
machine of the same fleet. Each host's figure is the median of its log run medians, m_i = mu + b_i + e_i: b_i
the host's own speed (spread sb between the fleet's machines), e_i the median of its runs' noise (variance
median_variance(n) sw^2 for n runs: 1/2 for two runs, as their mean; 0.449 for three, where a mean's would be
1/3). A median, not a mean, because one run that stalled (not every stall is flagged as disturbed) moves a mean
of its host's runs by a share of the stall and a median of three hardly at all. For hosts with equal run counts
the m_i are independent draws of one distribution, with variance sb^2 + median_variance(n) sw^2, and the sample
variance of the k others' figures

    s^2 = sum (m_i - mean(m))^2 / (k - 1)

estimates that whole variance on k - 1 degrees of freedom, with no split into sb and sw and so nothing to
truncate at zero (a split does: an ANOVA's sb^2 = (MSB - MSW) / n is cut to 0 whenever MSB < MSW, and a test
that then borrows the runs' many degrees of freedom calls shifts it cannot tell). The new host H differs
from the others' mean by d = m_H - mean(m), whose variance is (sb^2 + median_variance(n) sw^2)(1 + 1/k), so

    t = d / (s sqrt(1 + 1/k)),  t with k - 1 degrees of freedom

is exact where the figures are normal (a median of normal runs is not quite normal, but close). A caller that
knows sw (the runs' spread, pooled within the members on many degrees of freedom) floors s at its part,
sqrt(median_variance(n)) sw (`runs_floor`): that only widens the interval, keeping k - 1 degrees of freedom. It is the
pooled two-sample t-test of a group of one (H) against the k others: the single member adds no squares and no
degrees of freedom to the pooled variance, so
`scipy.stats.ttest_ind([m_H], others, equal_var=True)` gives the same t and p. The minimum detectable
shift is t_crit(k - 1, alpha) * s sqrt(1 + 1/k).

Run counts: the model wants every host's figure taken over as many runs. Where they differ, the others'
figures still share one mean and s^2 still estimates their average variance; a host with fewer runs than
the others has a noisier figure than s^2 counts, which makes it a little easier to name. No correction is
made (one would need sb and sw apart again, the split this test avoids), and the caller says how many runs
each side had.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from driftcheck.stats.comparison import ALPHA_CHECK, MIN_SPREAD, t_critical, t_two_sided_p

# Two others give the spread one degree of freedom: the fewest that measure one at all.
MIN_OTHERS = 2
# The variance of the median of n independent standard normal draws, n = 1..9 (for even n the mean of the middle
# two), integrated numerically from the order statistics' densities (tests/stats/test_prediction.py checks each
# against scipy). Not the mean's 1/n: 0.449 for three runs (1.35 times a mean's), and pi / (2 n) only for large n
# (0.52 at n = 3 would overstate it).
_MEDIAN_VARIANCE = (1.0, 0.5, 0.4487, 0.2982, 0.2868, 0.2147, 0.2104, 0.1682, 0.1661)


@dataclass(frozen=True)
class Prediction:
    """One member's figure against the prediction from `others` members (all in logs): the shift from their
    mean, their spread s (the sample standard deviation of their figures, never under MIN_SPREAD), the
    shift's standard error s sqrt(1 + 1/k), its degrees of freedom k - 1, t, the two-sided p, and the MDS
    (in logs) at the level asked."""

    shift: float
    spread: float
    se: float
    df: int
    t: float
    p: float
    mds_log: float
    others: int

    @property
    def spread_pct(self) -> float:
        """The others' spread as ±% (exp(s) - 1): how far one host typically lies from the fleet's centre."""
        return math.expm1(self.spread) * 100.0


def predict_member(member: float, others: Sequence[float], alpha: float = ALPHA_CHECK,
                   least_spread: float = MIN_SPREAD) -> Prediction:
    """Whether `member` (a log figure) lies outside the prediction interval that `others` (the other
    members' log figures, at least MIN_OTHERS) give for one new member, at two-sided level `alpha`.

    The spread is floored at MIN_SPREAD (timer and scheduling noise: even identical figures carry it), so
    others that agree exactly do not make every difference significant, and at `least_spread`, what the
    caller knows a figure varies by at the least (a fleet: its runs' own noise, `runs_floor`). A floor only
    widens the interval and keeps the k - 1 degrees of freedom, so the level only falls."""
    k = len(others)
    if k < MIN_OTHERS:
        raise ValueError(f"a prediction needs at least {MIN_OTHERS} others, got {k}")
    centre = statistics.fmean(others)
    spread = max(statistics.stdev(others), MIN_SPREAD, least_spread)
    se = spread * math.sqrt(1.0 + 1.0 / k)
    df = k - 1
    shift = member - centre
    t = shift / se
    return Prediction(shift, spread, se, df, t, t_two_sided_p(t, df), t_critical(df, alpha) * se, k)


def runs_floor(runs_spread: float, runs: int) -> float:
    """The least standard deviation a member's figure, the median of `runs` runs, can have when one run's noise
    alone has standard deviation `runs_spread` (sw, pooled within the members): sqrt(median_variance(runs)) sw.
    The figures' variance sb^2 + median_variance(n) sw^2 is never below its runs' part, however closely a few
    others happen to agree: six hosts whose medians fell within ±4% of each other, beside runs spread ±40% within
    each host, predicted one more host within ±25%, and named an unchanged host whose three runs all fell low."""
    return math.sqrt(median_variance(runs)) * runs_spread


def median_variance(runs: int) -> float:
    """The variance of the median of `runs` independent draws of unit variance (normal): how much of one run's
    noise a host's figure, the median of its runs, keeps. Beyond nine runs, the large-n limit pi / (2 runs)."""
    if runs < 1:
        raise ValueError(f"a median needs at least one run, got {runs}")
    return _MEDIAN_VARIANCE[runs - 1] if runs <= len(_MEDIAN_VARIANCE) else math.pi / (2.0 * runs)
