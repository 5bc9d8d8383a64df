"""The prediction test for one new member (driftcheck.stats.prediction), checked against scipy: t and p against
`scipy.stats.ttest_ind([x], others, equal_var=True)` (a group of one adds no variance: the same test), the MDS
against `scipy.stats.t.ppf`, and its level by simulation of fleets whose machines and runs both vary."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy import integrate, stats

from driftcheck.stats.comparison import MIN_SPREAD
from driftcheck.stats.prediction import MIN_OTHERS, median_variance, predict_member


@pytest.mark.parametrize(("seed", "others"), [(1, 2), (2, 4), (3, 7), (4, 15)])
def test_t_and_p_are_scipys_pooled_t_test_of_a_group_of_one(seed: int, others: int) -> None:
    rng = random.Random(seed)
    figures = [rng.gauss(3.0, 0.1) for _ in range(others)]
    member = rng.gauss(2.8, 0.1)
    test = predict_member(member, figures, alpha=0.01 / 8)
    oracle = stats.ttest_ind([member], figures, equal_var=True)
    assert test.t == pytest.approx(oracle.statistic, rel=1e-9)
    assert test.p == pytest.approx(oracle.pvalue, rel=1e-6)
    assert test.df == others - 1 and test.others == others
    assert test.shift == pytest.approx(member - statistics.fmean(figures))
    assert test.se == pytest.approx(statistics.stdev(figures) * math.sqrt(1 + 1 / others))
    assert test.mds_log == pytest.approx(stats.t.ppf(1 - 0.01 / 16, others - 1) * test.se, rel=1e-6)


def test_a_member_beyond_its_mds_has_a_p_under_the_level() -> None:
    figures = [0.0, 0.05, -0.04, 0.02, -0.01, 0.03, -0.02]
    test = predict_member(0.0, figures, alpha=0.001)
    beyond = predict_member(statistics.fmean(figures) - test.mds_log * 1.01, figures, alpha=0.001)
    within = predict_member(statistics.fmean(figures) - test.mds_log * 0.99, figures, alpha=0.001)
    assert beyond.p < 0.001 < within.p


def test_others_that_agree_exactly_still_carry_timer_noise() -> None:
    test = predict_member(0.01, [0.0, 0.0, 0.0])
    assert test.spread == MIN_SPREAD and math.isfinite(test.t)


def test_fewer_than_two_others_measure_no_spread() -> None:
    assert MIN_OTHERS == 2
    with pytest.raises(ValueError, match="at least 2 others"):
        predict_member(0.0, [0.1])


def test_an_unchanged_fleet_names_a_member_at_about_the_level_whatever_splits_its_spread() -> None:
    # Hosts' figures are the median of n log run medians (for two, their mean): host speed (sb) plus run noise
    # (sw). The test needs no split of the two, so its level holds where the machines agree better than their runs
    # (sb = 0, where an ANOVA's estimate of sb is often truncated to 0) and where they differ by far more; and a
    # median of three normal runs, not quite normal itself, is near enough for the level to hold.
    rng = random.Random(34)
    alpha, hosts, trials = 0.05, 8, 4000
    for runs in (2, 3):
        for sb, sw in ((0.0, 0.05), (0.05, 0.01), (0.03, 0.03)):
            named = 0
            for _ in range(trials):
                figures = [rng.gauss(0.0, sb) + statistics.median(rng.gauss(0.0, sw) for _ in range(runs))
                           for _ in range(hosts)]
                named += predict_member(figures[0], figures[1:], alpha).p < alpha
            # Binomial sd at 5% of 4000 is 0.34 points: 3.5% to 6.5% is over 4 of them either side.
            assert 0.035 < named / trials < 0.065, (runs, sb, sw, named / trials)


def scipys_median_variance(runs: int) -> float:
    """The variance of the median of `runs` standard normal draws, integrated by scipy over the order statistics'
    density (odd: the middle one's; even: the joint density of the middle two, whose mean is the median)."""
    norm, middle = stats.norm, runs // 2
    if runs % 2:
        weight = math.factorial(runs) / math.factorial(middle) ** 2
        return integrate.quad(lambda x: x * x * weight * (norm.cdf(x) * norm.sf(x)) ** middle * norm.pdf(x),
                              -10, 10)[0]
    weight = math.factorial(runs) / math.factorial(middle - 1) ** 2
    return integrate.dblquad(lambda y, x: ((x + y) / 2) ** 2 * weight * (norm.cdf(x) * norm.sf(y)) ** (middle - 1)
                             * norm.pdf(x) * norm.pdf(y), -10, 10, lambda x: x, lambda x: 10)[0]


@pytest.mark.parametrize("runs", range(1, 10))
def test_the_median_variance_of_n_runs_is_scipys(runs: int) -> None:
    assert median_variance(runs) == pytest.approx(scipys_median_variance(runs), abs=1e-4)


def test_a_median_of_three_keeps_more_of_the_run_noise_than_a_mean_and_less_than_the_large_n_formula() -> None:
    # 0.449: 1.35 times a mean's 1/3, and below pi / 6 = 0.524, which holds only for many runs.
    assert 1 / 3 < median_variance(3) < math.pi / 6
    assert median_variance(2) == 0.5  # the median of two is their mean
    # Beyond the table the large-n limit, within 15% of the truth at 11 runs and closer after.
    assert median_variance(11) == pytest.approx(math.pi / 22) == pytest.approx(scipys_median_variance(11), rel=0.15)
    with pytest.raises(ValueError, match="at least one run"):
        median_variance(0)
