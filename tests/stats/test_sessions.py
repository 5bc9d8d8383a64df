"""The between-session spread and the test that counts it (driftcheck.stats.sessions), checked against scipy:
the ANOVA's F against `scipy.stats.f_oneway`, the Welch-Satterthwaite degrees of freedom against
`scipy.stats.ttest_ind(equal_var=False)`, the MDS against `scipy.stats.t.ppf`."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy import stats

from driftcheck.stats.comparison import KNOWN_DF, Resolution, median_resolution
from driftcheck.stats.sessions import (
    MIN_SESSIONS,
    across_sessions,
    assumed_spread,
    mean_squares,
    measured_spread,
    satterthwaite_df,
    spread_from_json,
)


def _sessions(seed: int, sizes: list[int], between: float, within: float) -> list[list[float]]:
    rng = random.Random(seed)
    out = []
    for size in sizes:
        level = rng.gauss(0.0, between)
        out.append([level + rng.gauss(0.0, within) for _ in range(size)])
    return out


@pytest.mark.parametrize("seed,sizes", [(1, [3, 3, 3]), (2, [3, 6, 3, 6, 4]), (3, [2, 5]), (4, [3] * 12)])
def test_the_anova_of_one_state_is_scipys(seed: int, sizes: list[int]) -> None:
    sessions = _sessions(seed, sizes, 0.1, 0.03)
    squares = mean_squares([sessions])
    assert squares is not None
    oracle = stats.f_oneway(*sessions)
    assert squares.f == pytest.approx(float(oracle.statistic), rel=1e-9)
    assert squares.df_between == len(sizes) - 1 and squares.df_within == sum(sizes) - len(sizes)


def test_states_pool_their_sessions_around_their_own_means() -> None:
    # Two states: the second is the first moved by +0.7 (another configuration, faster). Pooled, the spread is
    # that of one state's sessions: the move between states is no between-session noise.
    first = _sessions(5, [3, 3, 4, 3], 0.08, 0.02)
    second = [[x + 0.7 for x in s] for s in first]
    one, both = mean_squares([first]), mean_squares([first, second])
    assert one is not None and both is not None
    assert both.between == pytest.approx(one.between) and both.within == pytest.approx(one.within)
    assert both.df_between == 2 * one.df_between
    assert measured_spread([first, second]).spread == pytest.approx(measured_spread([first]).spread)


def test_sessions_without_run_noise_spread_as_their_means() -> None:
    means = [0.0, 0.1, -0.05, 0.2]
    sessions = [[m] * 3 for m in means]
    spread = measured_spread([sessions])
    assert spread is not None and spread.measured and spread.sessions == 4 and spread.df == 3
    assert spread.spread == pytest.approx(statistics.stdev(means))


def test_sessions_that_scatter_no_more_than_their_runs_measure_no_between_spread() -> None:
    sessions = [[0.0, 0.1, -0.1], [0.01, 0.11, -0.09], [-0.01, 0.09, -0.11]]
    spread = measured_spread([sessions])
    assert spread is not None and spread.spread == 0.0 and spread.measured


def test_fewer_sessions_than_the_minimum_measure_nothing() -> None:
    assert MIN_SESSIONS == 3
    assert measured_spread([[[0.0, 0.1], [0.3, 0.2]]]) is None
    # Single sessions of two states: no state has two, so nothing is measured either.
    assert measured_spread([[[0.0, 0.1]], [[0.3, 0.2]], [[0.5]]]) is None
    assert measured_spread([[[0.0, 0.1], [0.3, 0.2]], [[0.5, 0.4], [0.6]]]) is not None


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_the_degrees_of_freedom_are_welchs(seed: int) -> None:
    rng = random.Random(seed)
    a = [rng.gauss(0.0, 0.05) for _ in range(4)]
    b = [rng.gauss(0.1, 0.2) for _ in range(7)]
    ours = satterthwaite_df([(statistics.variance(a) / len(a), len(a) - 1),
                             (statistics.variance(b) / len(b), len(b) - 1)])
    assert ours == pytest.approx(float(stats.ttest_ind(b, a, equal_var=False).df), rel=1e-12)


def test_satterthwaite_with_no_variance_is_known() -> None:
    assert satterthwaite_df([(0.0, 3), (0.0, 5)]) == KNOWN_DF
    assert satterthwaite_df([(0.0, 3), (0.02, 5)]) == pytest.approx(5.0)


def test_the_mds_across_sessions_is_the_t_quantile_times_the_standard_error() -> None:
    within = median_resolution([0.0, 0.03, -0.03], [0.1, 0.12, 0.08, 0.11, 0.09, 0.1], 0.0, 0.2, 0.005)
    between = measured_spread([_sessions(21, [3, 3, 3, 3, 3], 0.05, 0.01)])
    assert between is not None and between.spread > 0
    res = across_sessions(within, between, 3, 6, 0.005)
    runs_term = within.spread ** 2 * (1 / 3 + 1 / 6)
    sessions_term = 2 * between.spread ** 2
    df = (sessions_term + runs_term) ** 2 / (sessions_term ** 2 / between.df + runs_term ** 2 / within.df)
    assert res.df == math.floor(df)
    expected = float(stats.t.ppf(1 - 0.005 / 2, math.floor(df))) * math.sqrt(sessions_term + runs_term)
    assert res.mds_log == pytest.approx(expected, rel=1e-6)
    assert res.mds_log > within.mds_log and res.spread == within.spread


def test_a_host_measured_steady_keeps_the_runs_own_test() -> None:
    within = median_resolution([0.0, 0.03, -0.03], [0.1, 0.12, 0.08], 0.0, 0.2)
    steady = measured_spread([[[0.0, 0.1, -0.1], [0.01, 0.11, -0.09], [-0.01, 0.09, -0.11]]])
    assert steady is not None
    res = across_sessions(within, steady, 3, 3)
    assert res == Resolution(within.spread, within.df, True, pytest.approx(within.mds_log))


def test_an_assumed_spread_is_taken_as_known() -> None:
    within = median_resolution([0.0, 0.03, -0.03], [0.1, 0.12, 0.08], 0.0, 0.2)
    assumed = assumed_spread(0.2)
    res = across_sessions(within, assumed, 3, 3)
    sessions_term, runs_term = 2 * 0.2 ** 2, within.spread ** 2 * (2 / 3)
    df = math.floor((sessions_term + runs_term) ** 2 / (runs_term ** 2 / within.df))
    assert res.df == df
    assert res.mds_log == pytest.approx(float(stats.t.ppf(1 - 0.01 / 2, df)) * math.sqrt(sessions_term + runs_term),
                                        rel=1e-6)


def test_a_spread_round_trips_through_a_record() -> None:
    spread = measured_spread([_sessions(31, [3, 3, 3, 3], 0.06, 0.01)])
    assert spread is not None
    back = spread_from_json(spread.to_json())
    assert back is not None and back.measured and back.df == spread.df and back.sessions == spread.sessions
    assert back.spread == pytest.approx(spread.spread, abs=1e-4)
    for bad in (None, [], {"spread_pct": "x", "df": 3, "sessions": 4}, {"spread_pct": -1.0, "df": 3, "sessions": 4},
                {"spread_pct": 2.0, "df": 0, "sessions": 4}, {"spread_pct": float("nan"), "df": 3, "sessions": 4},
                {"spread_pct": 2.0, "df": True, "sessions": 4}):
        assert spread_from_json(bad) is None
