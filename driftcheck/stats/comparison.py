"""The statistics of driftcheck's comparisons, in one place: for an interleaved A/B trial (`try`,
`explain --confirm`, `bisect`) the paired test, its sequential stopping rule, the effect with its confidence
interval, and the smallest effect a trial that found nothing would have seen; for a check against the past
(`check --against`, where nothing can be paired) the pooled t-test on two records' log run medians, its
MDS, and the control normalisation (the last section; the verdict's wording is driftcheck.analysis.bench_verdicts).

Stdlib only (no scipy at run time); tests check every number against scipy.stats on fixed data.

- **Data**: one log ratio per pair, ln(B/A). Logs make "B is 36 % slower" and "A is 56 % faster" the same
  size, and a machine-wide slowdown that hits both runs of a pair cancels out.
- **Test**: Wilcoxon signed-rank, two-sided, zeros dropped (scipy's `zero_method="wilcox"`). Exact
  distribution when at most 50 non-zero differences and no ties among their sizes; else the normal
  approximation with the tie correction of the variance (no continuity correction), as scipy's default.
- **Sequential rule**: looks at a fixed schedule of pair counts, planned before the first run
  (`LookPlan`). Look k may decide at the nominal level c·(n_k/N)^2 (N the last look): a spending shape
  between Pocock's constant level and O'Brien–Fleming's, which keeps most of the power of the last look
  and still stops early on a large effect. The constant c is calibrated on the exact, distribution-free
  joint null of the signed-rank statistics across the looks: with iid differences symmetric about 0 and
  continuous, the signs are fair coins independent of the ranks of the sizes, so a seeded Monte-Carlo of
  uniform sizes and random signs gives that joint law for any plan (`calibrate`). c is the largest level
  whose simulated chance of a false "different" at any look stays <= alpha with 99 % confidence over the
  simulation's own error. (Bonferroni, splitting alpha evenly over the looks, is valid too but spends
  alpha twice on looks that see mostly the same pairs; it held the false-positive rate near 3 % where 5 %
  was allowed.) Plans past CALIBRATED_MAX_PAIRS keep the Bonferroni split (the simulation grows with N).
  A trial stopped early by its time budget spends at that unplanned last look all the alpha the looks
  before it had not spent (their simulated chance of a false "different", bounded above), so the union
  of the two still holds alpha.
- **Effect**: the Hodges–Lehmann estimate (median of the Walsh averages) of the log ratio, with its
  distribution-free interval (order statistics of the Walsh averages at the signed-rank critical value).
  The interval is taken at the look's level, so it is a *repeated* confidence interval: it inverts the
  same sequential test (the differences minus the true shift are under that test's null), so it keeps
  its stated (e.g. 95 %) coverage whichever look the trial stopped at, and excludes 0 when the test
  decides.
- **Resolution**: the minimum detectable effect at the reached n, from the spread of the log ratios, at
  the last look's alpha and 80 % power, with the signed-rank test's efficiency relative to the t-test
  (3/π for normal data) — an approximation, said as one. Where n pairs are too few for the exact test to
  ever reach the per-look alpha, nothing could have been seen and the figure is infinite.
"""

from __future__ import annotations

import bisect
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# Its home is the package (read by every command line that declares --max-pairs); the name stays here too for
# the trial runner (driftcheck/runs/trial.py), which reads it from this module.
from driftcheck.stats import DEFAULT_MAX_PAIRS as DEFAULT_MAX_PAIRS

# The exact null distribution is used up to this many non-zero differences (scipy's own limit).
EXACT_MAX_N = 50
POWER = 0.8
# Asymptotic relative efficiency of the signed-rank test to the t-test under normal data.
_ARE = 3.0 / math.pi
_NORMAL = statistics.NormalDist()


# --- the signed-rank test ------------------------------------------------------------------------------

@dataclass(frozen=True)
class SignedRank:
    """The result of a two-sided Wilcoxon signed-rank test on paired differences."""

    statistic: float  # min(W+, W-), as scipy reports for a two-sided test
    p_value: float
    n: int  # non-zero differences used
    exact: bool


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n of `values`, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        mean_rank = (start + end) / 2.0 + 1.0
        for position in range(start, end + 1):
            ranks[order[position]] = mean_rank
        start = end + 1
    return ranks


@lru_cache(maxsize=128)
def _exact_counts(n: int) -> tuple[int, ...]:
    """How many of the 2^n sign assignments give W+ = k, for k = 0..n(n+1)/2."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for total in range(len(counts) - 1, rank - 1, -1):
            counts[total] += counts[total - rank]
    return tuple(counts)


def _exact_cdf(n: int, k: int) -> float:
    """P(W+ <= k) under the null for n non-zero differences without ties."""
    if k < 0:
        return 0.0
    counts = _exact_counts(n)
    return sum(counts[: k + 1]) / float(2 ** n)


def wilcoxon(differences: Sequence[float]) -> SignedRank:
    """The two-sided signed-rank test of `differences` (zeros dropped). p = 1 when nothing is left."""
    nonzero = [d for d in differences if d != 0]
    n = len(nonzero)
    if n == 0:
        return SignedRank(0.0, 1.0, 0, True)
    sizes = [abs(d) for d in nonzero]
    ranks = _ranks(sizes)
    w_plus = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    w_minus = sum(r for r, d in zip(ranks, nonzero, strict=True) if d < 0)
    statistic = min(w_plus, w_minus)
    ties = len(set(sizes)) < n
    if n <= EXACT_MAX_N and not ties:
        p = min(1.0, 2.0 * _exact_cdf(n, int(statistic)))
        return SignedRank(statistic, p, n, True)
    mean = n * (n + 1) / 4.0
    tie_sizes = [sizes.count(value) for value in set(sizes)]
    variance = n * (n + 1) * (2 * n + 1) / 24.0 - sum(t ** 3 - t for t in tie_sizes) / 48.0
    if variance <= 0:
        return SignedRank(statistic, 1.0, n, False)
    z = (statistic - mean) / math.sqrt(variance)
    return SignedRank(statistic, min(1.0, math.erfc(abs(z) / math.sqrt(2.0))), n, False)


def smallest_p(n: int) -> float:
    """The smallest two-sided p the exact test can give with n pairs (all of one sign)."""
    return 1.0 if n <= 0 else min(1.0, 2.0 / 2 ** n)


# --- the effect and its interval -----------------------------------------------------------------------

def _walsh_averages(values: Sequence[float]) -> list[float]:
    return sorted((values[i] + values[j]) / 2.0 for i in range(len(values)) for j in range(i, len(values)))


def _critical_rank(n: int, alpha: float) -> int:
    """The number k of Walsh averages cut from each end for a (1 - alpha) interval: the largest k with
    P(W+ <= k - 1) <= alpha / 2 (exact up to EXACT_MAX_N, normal beyond); at least 1."""
    if n <= EXACT_MAX_N:
        k = 0
        while _exact_cdf(n, k) <= alpha / 2.0:
            k += 1
        return max(1, k)
    mean = n * (n + 1) / 4.0
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    return max(1, math.floor(mean - _NORMAL.inv_cdf(1 - alpha / 2.0) * sd))


def hodges_lehmann(values: Sequence[float], alpha: float = 0.05) -> tuple[float, float, float]:
    """(estimate, low, high): the Hodges–Lehmann location of `values` and its distribution-free (1 - alpha)
    interval. With too few values for that level the interval is the whole range of the Walsh averages."""
    if not values:
        raise ValueError("no values")
    walsh = _walsh_averages(values)
    k = _critical_rank(len(values), alpha)
    k = min(k, (len(walsh) + 1) // 2)
    return statistics.median(walsh), walsh[k - 1], walsh[len(walsh) - k]


def minimum_detectable(values: Sequence[float], alpha: float, power: float = POWER) -> float:
    """The smallest |mean log ratio| the signed-rank test would detect with this n and spread (approximate:
    a normal model scaled by the test's efficiency); inf where n pairs cannot reach `alpha` at all."""
    n = len(values)
    if n < 2 or smallest_p(n) > alpha:
        return math.inf
    spread = statistics.stdev(values)
    z = _NORMAL.inv_cdf(1 - alpha / 2.0) + _NORMAL.inv_cdf(power)
    return z * spread / math.sqrt(n * _ARE)


def log_ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """ln(B/A) per pair; ValueError for a figure that is not positive (a log ratio needs both > 0)."""
    if len(a) != len(b):
        raise ValueError("A and B need the same number of runs")
    if any(x <= 0 for x in (*a, *b)):
        raise ValueError("every figure must be positive to compare as a ratio")
    return [math.log(y / x) for x, y in zip(a, b, strict=True)]


def percent(log_ratio: float) -> float:
    """A log ratio as a percent change (0.0953 -> 10.0)."""
    return (math.exp(log_ratio) - 1.0) * 100.0


# --- the sequential plan -------------------------------------------------------------------------------

# The shape of the per-look levels: look k may spend c·(n_k/N)^SHAPE (0: Pocock's constant level).
SHAPE = 2.0
# The joint-null simulation: its size, its fixed seed (a plan is the same every time), and the one-sided
# confidence (z) with which its estimate of the false-positive rate must stay within alpha.
CALIBRATION_SIMS = 30_000
CALIBRATION_SEED = 20
_CALIBRATION_Z = 2.326
# About the c a calibration gives, as a share of alpha: where the first look is put.
_FIRST_LEVEL_GUESS = 0.7
# Up to this many pairs a plan is calibrated (about 1 s per 24 pairs on one idle core, once per process);
# beyond, the simulation would take longer than it saves: Bonferroni.
CALIBRATED_MAX_PAIRS = 40
_BONFERRONI = "Bonferroni split of alpha over planned looks"
_CALIBRATED = ("level c*(n/N)^2 per look, c calibrated on the exact joint null of the signed-rank statistics "
               "(seeded Monte-Carlo)")


@dataclass(frozen=True)
class LookPlan:
    """When the trial looks at its data (pair counts) and the alpha each look may spend."""

    looks: tuple[int, ...]
    alpha: float
    levels: tuple[float, ...] = ()  # the nominal level of each look; () = alpha split evenly (Bonferroni)
    spent: tuple[float, ...] = ()  # an upper bound on P(a false "different" by each look); () = Bonferroni's sums
    rule: str = _BONFERRONI

    def level(self, n: int) -> float | None:
        """The nominal level of the planned look at n pairs; None where none is planned."""
        if n not in self.looks:
            return None
        index = self.looks.index(n)
        return self.levels[index] if self.levels else self.alpha / len(self.looks)

    def alpha_at(self, n: int, final: bool) -> float | None:
        """The alpha a look at n pairs may spend: its level at a planned look, what is left unspent at a
        final unplanned one (a budget ran out), None where no look is due."""
        planned = self.level(n)
        if planned is not None:
            return planned
        if not final:
            return None
        before = [index for index, look in enumerate(self.looks) if look < n]
        if not before:
            return self.alpha
        spent = self.spent[before[-1]] if self.spent else len(before) * self.alpha / len(self.looks)
        return max(0.0, self.alpha - spent)

    def to_json(self) -> dict[str, Any]:
        """The plan as reports keep it."""
        return {"looks": list(self.looks), "alpha": self.alpha,
                "levels": [round(self.level(n) or 0.0, 6) for n in self.looks], "rule": self.rule}


def plan_looks(max_pairs: int, alpha: float = 0.05, comparisons: int = 1, growth: float = 1.5) -> LookPlan:
    """Looks from the first pair count where a unanimous trial could decide, growing by `growth`, ending at
    `max_pairs`, with calibrated levels (Bonferroni past CALIBRATED_MAX_PAIRS); alpha is first split over
    `comparisons` (B vs A, C vs A...). A look whose level no result could reach is dropped before the final
    calibration, so every look shown can decide."""
    if max_pairs < 2:
        raise ValueError("a trial needs at least 2 pairs")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    share = alpha / max(1, comparisons)
    if max_pairs > CALIBRATED_MAX_PAIRS:
        return _bonferroni_plan(max_pairs, share, growth)
    # Start where a unanimous trial could reach about the level the calibration will give that look.
    looks = _schedule(min(max_pairs, _first_look(share * _FIRST_LEVEL_GUESS, max_pairs, SHAPE)), max_pairs, growth)
    while True:
        plan = calibrate(looks, share)
        reachable = tuple(n for n in looks if smallest_p(n) <= (plan.level(n) or 0.0))
        if reachable == looks or not reachable:
            return plan
        looks = reachable  # the same simulation, fewer columns: cheap


def _bonferroni_plan(max_pairs: int, share: float, growth: float) -> LookPlan:
    for count in range(1, max_pairs + 1):
        looks = _schedule(_first_look(share / count), max_pairs, growth)
        if len(looks) <= count:
            return LookPlan(looks, share)
    return LookPlan((max_pairs,), share)


def calibrate(looks: tuple[int, ...], alpha: float, shape: float = SHAPE, sims: int = CALIBRATION_SIMS,
              seed: int = CALIBRATION_SEED) -> LookPlan:
    """The plan whose look k may decide at c·(n_k/N)^shape, c the largest level with the simulated chance of a
    false "different" at any look <= alpha at the simulation's one-sided 99 % confidence. Each look's p is
    the one `wilcoxon` gives (exact up to EXACT_MAX_N, the normal approximation beyond)."""
    if not looks or list(looks) != sorted(set(looks)) or looks[0] < 1:
        raise ValueError("looks must be increasing pair counts")
    weights = tuple((n / looks[-1]) ** shape for n in looks)
    # The joint null of N pairs, read at every count up to N; a plan takes its looks' columns.
    columns = [n - 1 for n in looks]
    scaled = [[row[col] / w for col, w in zip(columns, weights, strict=True)] for row in _joint_null(looks[-1], sims,
                                                                                                  seed)]
    allowed = math.floor(sims * alpha - _CALIBRATION_Z * math.sqrt(sims * alpha * (1 - alpha)))
    ordered = sorted(min(row) for row in scaled)
    c = 0.0
    for index, value in enumerate(ordered):
        # every draw equal to `value` decides at level c = value: count them all before taking it
        if index + 1 < len(ordered) and ordered[index + 1] == value:
            continue
        if index + 1 > allowed:
            break
        c = value
    # c is one simulated p / w: a hair above c·w keeps that p inside the level despite the rounding of c·w.
    levels = tuple(c * w * (1 + 1e-9) for w in weights)
    return LookPlan(looks, alpha, levels, _spent(scaled, c, alpha), _CALIBRATED)


def _spent(scaled: list[list[float]], c: float, alpha: float) -> tuple[float, ...]:
    """Upper bounds (one-sided 99 %, at most alpha) on the simulated chance of a false "different" by each
    look at level c."""
    sims = len(scaled)
    first = [next((index for index, value in enumerate(row) if value <= c), None) for row in scaled]
    bounds, hits = [], 0
    for index in range(len(scaled[0]) if scaled else 0):
        hits += first.count(index)
        rate = hits / sims
        bounds.append(min(alpha, rate + _CALIBRATION_Z * math.sqrt(max(rate, 1.0 / sims) * (1 - rate) / sims)))
    return tuple(bounds)


def _p_table(n: int) -> list[float]:
    """The two-sided p of min(W+, W-) = w as `wilcoxon` gives it without ties, for w = 0..n(n+1)/4."""
    if n > EXACT_MAX_N:
        mean, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        return [min(1.0, math.erfc(abs(w - mean) / sd / math.sqrt(2.0))) for w in range(n * (n + 1) // 4 + 1)]
    counts, total, table, below = _exact_counts(n), float(2 ** n), [], 0
    for w in range(n * (n + 1) // 4 + 1):
        below += counts[w]
        table.append(min(1.0, 2.0 * below / total))
    return table


@lru_cache(maxsize=8)
def _joint_null(pairs: int, sims: int, seed: int) -> tuple[tuple[float, ...], ...]:
    """Simulated trials of `pairs` pairs under the null; per trial the signed-rank p after each pair. The sizes
    are uniform draws and the signs fair coins; W+ is kept up to date as each pair comes in (a new size
    moves every larger positive one up a rank), so a trial costs O(N log N). Cached per process."""
    rng = random.Random(seed)
    tables = [_p_table(n) for n in range(1, pairs + 1)]
    out = []
    for _ in range(sims):
        sizes: list[float] = []
        positive: list[float] = []
        w_plus = 0
        row = []
        for n in range(1, pairs + 1):
            size = rng.random()
            w_plus += len(positive) - bisect.bisect(positive, size)
            if rng.getrandbits(1):
                w_plus += bisect.bisect(sizes, size) + 1
                bisect.insort(positive, size)
            bisect.insort(sizes, size)
            row.append(tables[n - 1][min(w_plus, n * (n + 1) // 2 - w_plus)])
        out.append(tuple(row))
    return tuple(out)


def _first_look(alpha: float, last: int | None = None, shape: float = 0.0) -> int:
    """The first pair count at which all pairs of one sign reach alpha·(n/last)^shape."""
    n = 2
    while smallest_p(n) > alpha * (n / last if last else 1.0) ** shape:
        n += 1
    return n


def _schedule(first: int, last: int, growth: float) -> tuple[int, ...]:
    if first >= last:
        return (last,)
    looks = [first]
    while True:
        following = max(looks[-1] + 1, math.ceil(looks[-1] * growth))
        if following >= last:
            break
        looks.append(following)
    if len(looks) >= 2 and last - looks[-1] < (looks[-1] - looks[-2]) / 2:
        looks.pop()  # a look just before the last would see almost the same pairs: the last one suffices
    looks.append(last)
    return tuple(looks)


# --- one comparison at one look ------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """What a look says of one variant against the reference: effect, repeated CI, p, and the verdict."""

    n: int
    effect_pct: float
    ci_low_pct: float
    ci_high_pct: float
    p_value: float
    alpha: float
    decided: bool
    detectable_pct: float  # ± the effect this n and spread would have shown (inf: none could)
    exact: bool

    def to_json(self) -> dict[str, Any]:
        """The comparison as `--format json` prints it."""
        detectable = None if math.isinf(self.detectable_pct) else round(self.detectable_pct, 3)
        return {"pairs": self.n, "effect_pct": round(self.effect_pct, 3), "ci_low_pct": round(self.ci_low_pct, 3),
                "ci_high_pct": round(self.ci_high_pct, 3), "p_value": self.p_value, "alpha": self.alpha,
                "decided": self.decided, "detectable_pct": detectable, "exact": self.exact}


def compare(ratios: Sequence[float], alpha: float) -> Comparison:
    """Test the log ratios at `alpha`; the effect's interval is at the same level (a repeated CI)."""
    test = wilcoxon(ratios)
    estimate, low, high = hodges_lehmann(ratios, alpha)
    mde = minimum_detectable(ratios, alpha)
    detectable = math.inf if math.isinf(mde) else percent(mde)
    return Comparison(len(ratios), percent(estimate), percent(low), percent(high), test.p_value, alpha,
                      test.n > 0 and test.p_value <= alpha, detectable, test.exact)


# --- checks against the past: two records' run medians, not paired --------------------------------------
# `check --against REF` cannot interleave with a past state: it compares the medians of N independent runs
# per record (driftcheck.analysis.bench_verdicts) with a two-sided pooled t-test on their logs at 1 %,
# and can divide each run's figure by the control measured beside it (driftcheck.baselines.control).
# A check that took more runs because its first ones could not decide (driftcheck.api.bench) looked
# twice: each look is judged at ALPHA_CHECK / looks (Bonferroni, driftcheck.stats.looks), so both keep 1 %.

# The level of a check's verdict: the chance that an unchanged benchmark is called slower or faster.
ALPHA_CHECK = 0.01
# No shift under this is called, whatever the noise says.
MIN_EFFECT = 0.02
# Degrees of freedom treated as known when an assumed spread is used (a normal critical value).
KNOWN_DF = 1_000_000
# Floor of the spread: even identical run medians carry timer and scheduling noise.
MIN_SPREAD = 0.002
# Past this many degrees of freedom, t's quantile is the normal one plus its first correction (error < 1e-7).
_T_NORMAL_DF = 20_000


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    value = d
    for m in range(1, 400):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            value *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return value


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function, for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    return _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=512)
def t_critical(df: int, alpha: float = ALPHA_CHECK) -> float:
    """The two-sided critical value of Student's t at level `alpha` (t_{1-alpha/2, df})."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be between 0 and 1")
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0)
    if df > _T_NORMAL_DF:
        return z + (z ** 3 + z) / (4.0 * df)
    low, high = 0.0, z
    while t_two_sided_p(high, df) > alpha:
        low, high = high, high * 2.0
    for _ in range(200):  # bisection: p falls as t grows
        middle = (low + high) / 2.0
        low, high = (middle, high) if t_two_sided_p(middle, df) > alpha else (low, middle)
        if high - low < 1e-10 * high:
            break
    return (low + high) / 2.0


@dataclass(frozen=True)
class Resolution:
    """The noise model of one comparison: spread of a log run median, its degrees of freedom, MDS."""

    spread: float
    df: int
    measured: bool
    mds_log: float

    @property
    def mds(self) -> float:
        """The minimum detectable shift as a fraction (0.08: a shift of 8% would be called)."""
        return max(math.exp(self.mds_log) - 1.0, MIN_EFFECT)


def median_resolution(before: Sequence[float], after: Sequence[float], within: float,
                      assumed_spread: float, alpha: float = ALPHA_CHECK) -> Resolution:
    """How finely two sets of log run medians can tell a shift: the pooled standard deviation of the logs
    (never under `within`, a run's own noise, nor MIN_SPREAD) with its degrees of freedom, and the MDS (in
    logs) of the pooled t-test at level `alpha`; with one run per side, `assumed_spread` at known degrees
    of freedom."""
    sides = [list(before), list(after)]
    squares = sum(sum((x - statistics.fmean(side)) ** 2 for x in side) for side in sides if len(side) > 1)
    df = sum(len(side) - 1 for side in sides)
    if df > 0:
        spread, measured = max(math.sqrt(squares / df), within, MIN_SPREAD), True
    else:
        spread, measured, df = max(assumed_spread, within), False, KNOWN_DF
    return Resolution(spread, df, measured, pooled_mds_log(spread, len(before), len(after), alpha, df))


def pooled_mds_log(spread: float, runs_before: int, runs_after: int, alpha: float = ALPHA_CHECK,
                   df: int | None = None) -> float:
    """The MDS (in logs) of the pooled t-test on two sets of that many run medians at this spread: the
    critical value at `alpha` (with `df`, by default the pooled runs' own) times the shift's standard error."""
    df = runs_before + runs_after - 2 if df is None else df
    return t_critical(df, alpha) * spread * math.sqrt(1.0 / runs_before + 1.0 / runs_after)


def mds_with_runs(spread: float, runs: int) -> float:
    """The MDS (fraction) two records of `runs` (at least 2) runs each would have at this spread."""
    return max(math.exp(pooled_mds_log(spread, runs, runs)) - 1.0, MIN_EFFECT)


def normalised_log(figure: float, control: float, higher_is_better: bool) -> float:
    """ln of a run's figure divided by the machine's speed its control measured beside it: a rate divided,
    a time multiplied (a slower machine takes longer). Both positive."""
    return math.log(figure) - (1.0 if higher_is_better else -1.0) * math.log(control)


def control_moved(shift_log: float, resolution: Resolution, min_shift: float) -> bool:
    """Whether a control's shift (in logs) is beyond its own MDS and at least `min_shift` (a fraction)."""
    return abs(shift_log) >= max(resolution.mds_log, math.log1p(min_shift))
