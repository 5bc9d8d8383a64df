"""The trial statistics against scipy's implementation on fixed data, and the sequential rule's error rate."""

from __future__ import annotations

import math
import random

import pytest

from driftcheck.baselines.trial_stats import (
    LookPlan,
    compare,
    hodges_lehmann,
    log_ratios,
    minimum_detectable,
    percent,
    plan_looks,
    smallest_p,
    wilcoxon,
)

stats = pytest.importorskip("scipy.stats")

# Fixed data: small exact cases, zeros, ties, and one past the exact limit (drawn once, written out).
EXACT_CASES = [
    [0.12, -0.03, 0.08, 0.21, 0.05, 0.17],
    [0.011, 0.024, -0.007, 0.031, 0.018, 0.009, -0.002, 0.027, 0.015, 0.02],
    [-0.3, 0.1, -0.25, 0.05, -0.15, 0.2, -0.4, 0.35],
    [0.5, 0.4, 0.3, 0.2, 0.1],
]
TIED_CASES = [
    [0.1, 0.1, -0.2, 0.3, 0.0, 0.3, 0.4, -0.1, 0.5, 0.5, 0.2],
    [0.02, -0.02, 0.02, 0.04, 0.0, 0.0, 0.04, 0.06, -0.04, 0.02, 0.08, 0.06],
]


@pytest.mark.parametrize("data", EXACT_CASES)
def test_exact_signed_rank_matches_scipy(data: list[float]) -> None:
    ours = wilcoxon(data)
    theirs = stats.wilcoxon(data, method="exact")
    assert ours.exact
    assert ours.statistic == pytest.approx(float(theirs.statistic))
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9)


@pytest.mark.parametrize("data", TIED_CASES)
def test_ties_and_zeros_use_the_corrected_normal_approximation_as_scipy(data: list[float]) -> None:
    ours = wilcoxon(data)
    theirs = stats.wilcoxon(data, method="approx", zero_method="wilcox", correction=False)
    assert not ours.exact
    assert ours.n == sum(1 for d in data if d != 0)
    assert ours.statistic == pytest.approx(float(theirs.statistic))
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9)


def test_past_fifty_pairs_the_normal_approximation_matches_scipy() -> None:
    rng = random.Random(20)
    data = [round(rng.gauss(0.02, 0.1), 6) for _ in range(64)]
    ours = wilcoxon(data)
    theirs = stats.wilcoxon(data, method="approx")
    assert not ours.exact
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9)


def test_all_zero_differences_are_no_evidence() -> None:
    result = wilcoxon([0.0, 0.0, 0.0])
    assert (result.n, result.p_value) == (0, 1.0)
    assert not compare([0.0] * 8, 0.05).decided


def test_hodges_lehmann_is_the_median_of_walsh_averages_with_an_order_statistic_interval() -> None:
    data = [0.1, 0.2, 0.15, 0.3, 0.12, 0.18, 0.2, 0.25]
    walsh = sorted((data[i] + data[j]) / 2 for i in range(8) for j in range(i, 8))
    estimate, low, high = hodges_lehmann(data, 0.05)
    assert estimate == pytest.approx(float(stats.tmean(walsh[17:19])))  # 36 averages: the mean of the middle two
    # n = 8, 95 %: P(W+ <= 3) = 0.0195 <= 0.025 < P(W+ <= 4) = 0.0273, so 4 averages are cut from each end.
    assert (low, high) == (walsh[3], walsh[-4])
    assert stats.wilcoxon(data, method="exact").pvalue < 0.05 and low > 0


def test_the_interval_excludes_zero_when_the_test_decides() -> None:
    rng = random.Random(5)
    for _ in range(200):
        data = [rng.gauss(0.03, 0.05) for _ in range(rng.randrange(6, 20))]
        result = compare(data, 0.05)
        excludes_zero = result.ci_low_pct > 0 or result.ci_high_pct < 0
        assert excludes_zero == result.decided


def test_looks_split_alpha_and_start_where_a_unanimous_trial_could_decide() -> None:
    plan = plan_looks(20, 0.05)
    assert plan.looks[-1] == 20
    assert list(plan.looks) == sorted(set(plan.looks))
    assert plan.alpha_per_look * len(plan.looks) == pytest.approx(0.05)
    assert smallest_p(plan.looks[0]) <= plan.alpha_per_look < smallest_p(plan.looks[0] - 1)
    assert plan.alpha_at(plan.looks[1], final=False) == plan.alpha_per_look
    assert plan.alpha_at(plan.looks[0] + 1, final=False) is None
    two_sided = plan_looks(20, 0.05, comparisons=2)
    assert two_sided.alpha == pytest.approx(0.025)


def test_a_budget_stop_spends_only_the_alpha_left() -> None:
    plan = LookPlan((8, 12, 18, 20), 0.05)
    assert plan.alpha_at(14, final=True) == pytest.approx(0.05 - 2 * 0.0125)
    assert plan.alpha_at(5, final=True) == pytest.approx(0.05)


def _sequential_trial(rng: random.Random, shift: float, plan: LookPlan, sd: float = 0.1) -> bool:
    data: list[float] = []
    for n in range(1, plan.looks[-1] + 1):
        data.append(rng.gauss(shift, sd))
        alpha = plan.alpha_at(n, final=n == plan.looks[-1])
        if alpha is not None and compare(data, alpha).decided:
            return True
    return False


def test_the_sequential_rule_keeps_the_false_positive_rate_and_finds_a_real_shift() -> None:
    rng = random.Random(42)
    plan = plan_looks(20, 0.05)
    false_positives = sum(_sequential_trial(rng, 0.0, plan) for _ in range(400))
    # The Bonferroni bound is <= 5 %; 400 trials put the observed rate within about ±2.2 % of the truth.
    assert false_positives / 400 <= 0.06
    found = sum(_sequential_trial(rng, 0.1, plan) for _ in range(100))  # a 10 % shift, 10 % noise per pair
    assert found >= 90


def test_minimum_detectable_effect_shrinks_with_pairs_and_is_infinite_when_nothing_could_decide() -> None:
    rng = random.Random(3)
    data = [rng.gauss(0, 0.05) for _ in range(40)]
    assert math.isinf(minimum_detectable(data[:4], 0.05))  # 4 pairs: the smallest p is 0.125
    small, large = minimum_detectable(data[:10], 0.05), minimum_detectable(data, 0.05)
    assert 0 < large < small


def test_log_ratios_and_percent() -> None:
    ratios = log_ratios([10.0, 20.0], [11.0, 18.0])
    assert [round(percent(r), 6) for r in ratios] == [10.0, -10.0]
    with pytest.raises(ValueError):
        log_ratios([1.0, 0.0], [1.0, 1.0])
