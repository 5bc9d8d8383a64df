"""Between-session spread: how far a host's speed moves between records of the same, unchanged state, and
the test of a check against the past that counts it.

Within one record the runs are taken back to back: their spread says how steady the machine was for those
minutes. Between two records the machine's speed also moves (other tenants of a VM, frequency, memory
placement), and the pooled t-test on run medians (`driftcheck.stats.comparison`) sees none of that: on a
quiet 2-core VM a check two minutes after its baseline called a skinny GEMM 13.5 % faster with an MDS of
±9.8 %, and three checks after it saw the GEMM +29 % to +46 % (issue 36).

**Model.** The log median of run j of session i is mu + s_i + e_ij: s_i the session's own speed (spread
sb between sessions), e_ij the run-to-run noise inside a session (spread sw). Two records taken in two
sessions, of nA and nB runs, differ by d = mean_B - mean_A with variance 2 sb^2 + sw^2 (1/nA + 1/nB).

**Estimate** (one-way random-effects ANOVA, pooled over states). The records of one unchanged state (a
baseline's sessions, the checks that passed against it) are the groups: SSB = sum n_i (m_i - m)^2 over its
sessions, SSW = sum (x_ij - m_i)^2 over their runs; summed over states, MSB = SSB / sum(k - 1) and MSW =
SSW / sum(N - k) (F = MSB / MSW is scipy's `f_oneway` on one state), and sb^2 = max(0, (MSB - MSW) / n0),
n0 the effective number of runs per session ((N - sum n_i^2 / N) / (k - 1), n for equal sessions).
Fewer than MIN_SESSIONS sessions measure nothing: the stated default applies.

**Test.** t = d / sqrt(2 sb^2 + sw^2 (1/nA + 1/nB)) with the Welch-Satterthwaite degrees of freedom of
the two terms (sb^2 with the sessions' degrees of freedom, sw^2 with the runs'), rounded down (fewer
degrees of freedom: a wider MDS). An assumed sb is taken as known (no degrees of freedom lost to it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from driftcheck.stats.comparison import ALPHA_CHECK, KNOWN_DF, Resolution, t_critical

# Sessions of one host (pooled over its states) before its between-session spread counts as measured:
# two give one degree of freedom, whose t quantile at 0.5 % is 127; three are the fewest that say something.
MIN_SESSIONS = 3

# One session's log run medians; one state's sessions; a host's states.
Session = Sequence[float]
State = Sequence[Session]


@dataclass(frozen=True)
class SessionSpread:
    """How far one benchmark's speed moves between sessions here: sb (a log standard deviation), the degrees
    of freedom it was measured with, and the sessions it came from (0 and not measured: assumed)."""

    spread: float
    df: int
    sessions: int
    measured: bool

    @property
    def spread_pct(self) -> float:
        """The spread as ±% (exp(sb) - 1)."""
        return (math.exp(self.spread) - 1.0) * 100.0

    def to_json(self) -> dict[str, float | int | bool]:
        """The spread as a record keeps it: ±%, degrees of freedom, sessions, measured or assumed."""
        return {"spread_pct": round(self.spread_pct, 3), "df": self.df, "sessions": self.sessions,
                "measured": self.measured}


def assumed_spread(spread: float) -> SessionSpread:
    """A between-session spread not measured here: `spread` taken as known."""
    return SessionSpread(spread, KNOWN_DF, 0, False)


def spread_from_json(value: object) -> SessionSpread | None:
    """A spread a record keeps (`to_json`), or None when `value` is not one."""
    if not isinstance(value, dict):
        return None
    pct, df, sessions = value.get("spread_pct"), value.get("df"), value.get("sessions")
    if not isinstance(pct, (int, float)) or isinstance(pct, bool) or not math.isfinite(pct) or pct < 0 \
            or not isinstance(df, int) or isinstance(df, bool) or df < 1 \
            or not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 0:
        return None
    return SessionSpread(math.log1p(pct / 100.0), df, sessions, bool(value.get("measured")))


@dataclass(frozen=True)
class MeanSquares:
    """The one-way ANOVA of sessions pooled over states: between and within mean squares, their degrees of
    freedom, and the effective runs per session."""

    between: float
    df_between: int
    within: float
    df_within: int
    runs_per_session: float

    @property
    def f(self) -> float:
        """F = MSB / MSW (inf where the runs inside each session agree exactly)."""
        return math.inf if self.within == 0 else self.between / self.within


def mean_squares(states: Sequence[State]) -> MeanSquares | None:
    """The pooled ANOVA of `states` (sessions with at least one run; states of one session add nothing);
    None when no state has two sessions."""
    ssb = ssw = weighted_n0 = 0.0
    df_between = df_within = 0
    for state in states:
        sessions = [list(s) for s in state if len(s) > 0]
        if len(sessions) < 2:
            continue
        runs = [x for s in sessions for x in s]
        grand = statistics.fmean(runs)
        ssb += sum(len(s) * (statistics.fmean(s) - grand) ** 2 for s in sessions)
        ssw += sum((x - statistics.fmean(s)) ** 2 for s in sessions for x in s)
        k, total = len(sessions), len(runs)
        df_between += k - 1
        df_within += total - k
        weighted_n0 += total - sum(len(s) ** 2 for s in sessions) / total
    if df_between == 0:
        return None
    within = ssw / df_within if df_within else 0.0
    return MeanSquares(ssb / df_between, df_between, within, df_within, weighted_n0 / df_between)


def measured_spread(states: Sequence[State]) -> SessionSpread | None:
    """sb of `states` (the module docstring's estimate), or None with fewer than MIN_SESSIONS sessions in
    states of two or more."""
    squares = mean_squares(states)
    sessions = sum(len(state) for state in states if len(state) > 1)
    if squares is None or sessions < MIN_SESSIONS:
        return None
    excess = max(0.0, squares.between - squares.within) / squares.runs_per_session
    return SessionSpread(math.sqrt(excess), squares.df_between, sessions, True)


def satterthwaite_df(terms: Sequence[tuple[float, float]], known: float = 0.0) -> float:
    """The Welch-Satterthwaite degrees of freedom of a sum of variance terms, each (variance, its degrees of
    freedom), plus a `known` variance (no estimate, so no term of the denominator): (known + sum v)^2 /
    sum(v^2 / df). KNOWN_DF where every estimated term is zero."""
    total = known + sum(v for v, _ in terms)
    denominator = sum(v * v / df for v, df in terms if v > 0)
    return KNOWN_DF if denominator == 0 else total * total / denominator


def across_sessions(within: Resolution, between: SessionSpread, runs_before: int, runs_after: int,
                    alpha: float = ALPHA_CHECK) -> Resolution:
    """`within` (the pooled test of two records' runs) widened by the between-session spread: the MDS of
    t = d / sqrt(2 sb^2 + sw^2 (1/nA + 1/nB)) at `alpha`, with Satterthwaite's degrees of freedom rounded
    down. Its `spread` stays the runs' own (sw)."""
    runs_term = within.spread ** 2 * (1.0 / runs_before + 1.0 / runs_after)
    sessions_term = 2.0 * between.spread ** 2
    if between.measured:
        df_exact = satterthwaite_df([(sessions_term, between.df), (runs_term, within.df)])
    else:  # an assumed spread is taken as known: it costs no degrees of freedom
        df_exact = satterthwaite_df([(runs_term, within.df)], known=sessions_term)
    df = min(max(1, math.floor(df_exact)), KNOWN_DF)
    mds_log = t_critical(df, alpha) * math.sqrt(sessions_term + runs_term)
    return Resolution(within.spread, df, within.measured, mds_log)
