"""The trial statistics against scipy's implementation on fixed data, and the sequential rule's error rate."""

from __future__ import annotations

import math
import random

import pytest

from driftcheck.stats.comparison import (
    CALIBRATED_MAX_PAIRS,
    CALIBRATION_SEED,
    CALIBRATION_SIMS,
    MIN_EFFECT,
    LookPlan,
    _joint_null,
    _p_table,
    compare,
    control_moved,
    hodges_lehmann,
    log_ratios,
    median_resolution,
    minimum_detectable,
    normalised_log,
    percent,
    plan_looks,
    smallest_p,
    t_critical,
    t_two_sided_p,
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


def test_a_calibrated_plan_gives_later_looks_more_and_every_look_can_decide() -> None:
    plan = plan_looks(24, 0.05)
    assert plan.looks[-1] == 24 and plan.rule != LookPlan((24,), 0.05).rule
    assert list(plan.looks) == sorted(set(plan.looks))
    levels = [plan.level(n) or 0.0 for n in plan.looks]
    assert levels == sorted(levels) and levels[-1] < 0.05
    # the shape: look k at c·(n_k/N)^2
    assert levels[0] / levels[-1] == pytest.approx((plan.looks[0] / 24) ** 2)
    assert all(smallest_p(n) <= level for n, level in zip(plan.looks, levels, strict=True))
    # more than Bonferroni's even split at every look but the first: the looks see mostly the same pairs
    assert levels[-1] > 0.05 / len(plan.looks)
    assert list(plan.spent) == sorted(plan.spent) and plan.spent[-1] <= 0.05
    assert plan.alpha_at(plan.looks[0] + 1, final=False) is None
    assert plan_looks(24, 0.05, comparisons=2).alpha == pytest.approx(0.025)
    assert plan_looks(24, 0.05) == plan  # seeded: the same plan every time


def test_past_the_calibrated_range_alpha_is_split_evenly() -> None:
    plan = plan_looks(CALIBRATED_MAX_PAIRS + 20, 0.05)
    assert not plan.levels
    assert sum(plan.level(n) or 0.0 for n in plan.looks) == pytest.approx(0.05)
    assert smallest_p(plan.looks[0]) <= (plan.level(plan.looks[0]) or 0.0)


def test_a_budget_stop_spends_only_the_alpha_left() -> None:
    bonferroni = LookPlan((8, 12, 18, 20), 0.05)
    assert bonferroni.alpha_at(14, final=True) == pytest.approx(0.05 - 2 * 0.0125)
    assert bonferroni.alpha_at(5, final=True) == pytest.approx(0.05)
    plan = plan_looks(24, 0.05)
    between = plan.looks[1] + 1
    assert plan.alpha_at(between, final=True) == pytest.approx(0.05 - plan.spent[1])
    assert plan.alpha_at(plan.looks[-1], final=True) == plan.level(plan.looks[-1])


def test_the_p_values_the_simulation_reads_are_scipys_exact_ones() -> None:
    for n in (5, 9, 14):
        table = _p_table(n)
        for w in (0, 1, 3, n):
            # n differences whose smallest w ranks... summing to w: ranks 1..n, the rank-w one negative (w <= n)
            data = [float(rank) for rank in range(1, n + 1)]
            if w:
                data[w - 1] = -data[w - 1]
            assert table[w] == pytest.approx(float(stats.wilcoxon(data, method="exact").pvalue), rel=1e-12)


def test_the_simulated_joint_null_has_the_exact_margins() -> None:
    rows = _joint_null(14, CALIBRATION_SIMS, CALIBRATION_SEED)
    sims = len(rows)
    for n in (9, 14):
        exact = max(p for p in _p_table(n) if p <= 0.05)  # the attainable level just under 5 %
        seen = sum(row[n - 1] <= exact for row in rows) / sims
        assert abs(seen - exact) < 4 * math.sqrt(exact * (1 - exact) / sims)


def _first_decision(rng: random.Random, draw: str, shift: float, plan: LookPlan) -> bool:
    """One sequential trial of the rule as `driftcheck try` runs it; True when some look decides."""
    if draw == "normal":
        data = [rng.gauss(shift, 0.1) for _ in range(plan.looks[-1])]
    else:  # heavy-tailed and skewed per run, symmetric per pair: the log ratio of two lognormal-ish figures
        data = [shift + math.log(rng.paretovariate(3.0)) - math.log(rng.paretovariate(3.0))
                for _ in range(plan.looks[-1])]
    final = plan.looks[-1]
    return any(wilcoxon(data[:n]).p_value <= (plan.alpha_at(n, final=n == final) or 0.0) for n in plan.looks)


@pytest.mark.parametrize("draw", ["normal", "heavy-tailed"])
def test_the_sequential_rule_keeps_the_false_positive_rate(draw: str) -> None:
    rng = random.Random(42)
    plan = plan_looks(24, 0.05)
    trials = 3000
    false_positives = sum(_first_decision(rng, draw, 0.0, plan) for _ in range(trials)) / trials
    # The calibration holds the true rate at <= 5 %; 3000 trials see it within ±0.9 % (2.3 standard errors).
    assert false_positives <= 0.05 + 2.33 * math.sqrt(0.05 * 0.95 / trials)
    assert false_positives > 0.03  # and it spends the alpha it has (Bonferroni's split stayed near 3 %)


def test_the_calibrated_rule_finds_a_ten_percent_shift_more_often_than_bonferroni() -> None:
    calibrated = plan_looks(24, 0.05)
    bonferroni = LookPlan((8, 12, 18, 20), 0.05)  # the split plan of 20 pairs this rule replaced
    shift, trials = math.log(1.1), 400
    found = {name: sum(_first_decision(random.Random(seed), "normal", shift, plan) for seed in range(trials))
             for name, plan in (("calibrated", calibrated), ("bonferroni", bonferroni))}
    assert found["calibrated"] >= 0.95 * trials  # sd 0.1 per pair
    assert found["calibrated"] > found["bonferroni"]


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


# --- checks against the past: the pooled t-test on log run medians -------------------------------------

RECORD_PAIRS = [
    ([47.0, 46.0, 48.0], [25.8, 26.3, 25.5]),
    ([6.0, 6.05, 5.95, 6.2, 5.9], [6.3, 6.1, 6.45, 6.2, 6.6]),
    ([101.0, 97.5], [92.0, 99.0, 95.5]),
]


@pytest.mark.parametrize("df", [*range(1, 41), 60, 100, 1_000, 19_999, 20_001, 1_000_000])
@pytest.mark.parametrize("alpha", [0.01, 0.005, 0.01 / 3, 0.05, 0.0005])
def test_t_critical_is_scipys_two_sided_value_at_any_level(df: int, alpha: float) -> None:
    assert t_critical(df, alpha) == pytest.approx(stats.t.ppf(1.0 - alpha / 2.0, df), rel=1e-7)


@pytest.mark.parametrize("df", [1, 2, 4, 9, 30, 300])
@pytest.mark.parametrize("t", [0.0, 0.5, 2.0, 4.6, 40.0])
def test_t_two_sided_p_is_scipys(df: int, t: float) -> None:
    assert t_two_sided_p(t, df) == pytest.approx(2.0 * stats.t.sf(t, df), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("a, b", RECORD_PAIRS)
def test_a_shift_at_the_mds_is_where_scipys_pooled_t_test_reaches_one_percent(a: list[float], b: list[float]) -> None:
    logs_a, logs_b = [math.log(x) for x in a], [math.log(x) for x in b]
    res = median_resolution(logs_a, logs_b, within=0.0, assumed_spread=0.2)
    shift = sum(logs_b) / len(logs_b) - sum(logs_a) / len(logs_a)
    t_statistic, p_value = stats.ttest_ind(logs_b, logs_a, equal_var=True)
    # The MDS is the critical t times the standard error: the shift passes it exactly when p < 1 %.
    assert abs(shift) / (res.mds_log / t_critical(res.df)) == pytest.approx(abs(t_statistic), rel=1e-9)
    assert (abs(shift) >= res.mds_log) == (p_value < 0.01)
    assert res.df == len(a) + len(b) - 2 and res.measured


def test_one_run_a_side_assumes_the_spread_and_a_run_s_own_noise_is_a_floor() -> None:
    assumed = median_resolution([0.0], [0.1], within=0.0, assumed_spread=0.2)
    assert not assumed.measured and assumed.spread == 0.2
    assert assumed.mds_log == pytest.approx(stats.norm.ppf(0.995) * 0.2 * math.sqrt(2), rel=1e-3)
    floored = median_resolution([0.0, 0.0], [0.1, 0.1], within=0.05, assumed_spread=0.2)
    assert floored.spread == 0.05 and floored.mds >= MIN_EFFECT


def test_normalising_divides_a_rate_and_multiplies_a_time_by_the_machine_speed() -> None:
    # The machine at 0.62 of its speed: 100 GFLOP/s read 62, 6 us read 9.68; both normalise back.
    assert math.exp(normalised_log(62.0, 0.62, higher_is_better=True)) == pytest.approx(100.0)
    assert math.exp(normalised_log(6.0 / 0.62, 0.62, higher_is_better=False)) == pytest.approx(6.0)


def test_a_control_moved_only_beyond_its_own_mds_and_the_floor() -> None:
    quiet = median_resolution([0.0, 0.01, -0.01], [0.0, 0.01, -0.01], within=0.0, assumed_spread=0.2)
    assert control_moved(math.log(0.9), quiet, 0.05) and not control_moved(math.log(0.97), quiet, 0.05)
    noisy = median_resolution([0.0, 0.2, -0.2], [0.0, 0.2, -0.2], within=0.0, assumed_spread=0.2)
    assert not control_moved(math.log(0.8), noisy, 0.05)
