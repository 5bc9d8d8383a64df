"""Verdicts with a resolution: slower/faster only beyond the MDS, unchanged only when the records can
resolve it, inconclusive otherwise; disturbance named, never blamed on the machine's configuration."""

from __future__ import annotations

import math

import pytest

from driftcheck.analysis.bench_verdicts import compare_verdicts, verdict_line
from driftcheck.stats.comparison import mds_with_runs, t_critical
from driftcheck.stats.run_medians import DEFAULT_SPREAD, RESOLVED_MDS

# Judged on a host whose sessions were measured not to differ (tests/between.py): these are tests of the rules
# within two records, which a between-session spread of zero leaves as they were.
from tests.between import verdict_on_a_steady_host as verdict


def record(medians: list[float], unit: str = "GFLOP/s", higher: bool = True, disturbed: str | None = None,
           taken: float | None = None, ci_rel: float = 0.005) -> dict:
    runs = [{"median": m, "n": 20, "ci_rel": ci_rel, "disturbed": disturbed, "taken": taken} for m in medians]
    return {"unit": unit, "higher_is_better": higher, "median": sorted(medians)[len(medians) // 2], "runs": runs}


def test_t_critical_matches_the_printed_table_and_tends_to_the_normal() -> None:
    assert t_critical(4) == pytest.approx(4.604, abs=1e-3)
    assert t_critical(30) == pytest.approx(2.750, abs=1e-3)
    assert t_critical(4, 0.005) == pytest.approx(5.598, abs=1e-3)  # t_{0.9975, 4}
    assert 2.5758 < t_critical(200) < t_critical(40) < 2.750
    with pytest.raises(ValueError):
        t_critical(0)
    with pytest.raises(ValueError):
        t_critical(4, 0.0)


def test_a_shift_beyond_the_mds_is_slower_and_states_its_resolution() -> None:
    entry = verdict("gemm", record([100.0, 102.0, 98.0]), record([70.0, 71.0, 69.5]))
    assert entry["verdict"] == "slower" and entry["significant"] is True
    assert entry["spread_measured"] is True and entry["runs"] == [3, 3]
    # spread ~1.5%: MDS = t(4) * s * sqrt(2/3) ~ 5-6%, well under the 30% shift.
    assert 3.0 < entry["mds_pct"] < 10.0
    assert entry["change_pct"] == pytest.approx(-30.0, abs=1.0)
    assert "slower" in verdict_line(entry) and "MDS ±" in verdict_line(entry)


def test_a_small_shift_in_quiet_runs_is_unchanged() -> None:
    entry = verdict("gemm", record([100.0, 101.0, 99.5]), record([100.3, 99.8, 100.9]))
    assert entry["verdict"] == "unchanged" and entry["significant"] is False
    assert entry["mds_pct"] < RESOLVED_MDS * 100


def test_a_shift_near_the_mds_is_inconclusive_with_a_hint() -> None:
    before, after = record([100.0, 102.0, 98.0]), record([96.0, 98.0, 94.0])
    entry = verdict("gemm", before, after)
    assert entry["verdict"] == "inconclusive" and entry["significant"] is False
    assert abs(entry["change_pct"]) < entry["mds_pct"]
    assert "--runs 5" in entry["reason"]


def test_noisy_records_cannot_call_anything_unchanged() -> None:
    entry = verdict("copy", record([100.0, 160.0]), record([100.0, 60.0]))
    assert entry["mds_pct"] > RESOLVED_MDS * 100
    assert entry["verdict"] == "inconclusive" and "cannot resolve" in entry["reason"]


def test_one_run_per_side_uses_the_default_spread_and_says_so() -> None:
    spread = DEFAULT_SPREAD["cpu"]
    mds_log = 2.5758 * spread * math.sqrt(2)
    big = verdict("gemm", record([100.0]), record([100.0 * math.exp(-1.1 * mds_log)]))
    assert big["verdict"] == "slower" and big["spread_measured"] is False
    small = verdict("gemm", record([100.0]), record([100.0 * math.exp(-0.7 * mds_log)]))
    assert small["verdict"] == "inconclusive" and "one run per side" in small["reason"]
    assert small["mds_pct"] == pytest.approx((math.exp(mds_log) - 1) * 100, abs=0.1)
    # A plain single-run result (no `runs` list, as older snapshots hold) reads the same way.
    legacy = {"unit": "GFLOP/s", "median": 100.0, "ci_low": 99.0, "ci_high": 101.0}
    halved = {**legacy, "median": 30.0, "ci_low": 29.7, "ci_high": 30.3}
    assert verdict("gemm", legacy, halved)["verdict"] == "slower"


def test_lower_is_better_units_turn_less_time_into_faster() -> None:
    entry = verdict("launch", record([10.0, 10.1, 9.9], "us", False), record([7.0, 7.1, 6.9], "us", False))
    assert entry["verdict"] == "faster"


def test_a_disturbance_that_could_explain_the_loss_makes_it_inconclusive_and_is_named() -> None:
    busy = "other processes kept 1.00 of 2 CPUs busy"
    entry = verdict("gemm", record([100.0, 101.0, 99.0]), record([80.0, 81.0, 79.0], disturbed=busy, taken=0.5))
    assert entry["verdict"] == "inconclusive" and busy in entry["disturbance"] and "B was disturbed" in entry["reason"]
    # Even a light disturbance voids a large loss: a busy core stalls a whole OpenMP team (measured: x8).
    light = "other processes kept 0.20 of 2 CPUs busy"
    entry = verdict("gemm", record([100.0, 101.0, 99.0]), record([55.0, 56.0, 54.0], disturbed=light, taken=0.1))
    assert entry["verdict"] == "inconclusive" and "B 3/3 runs disturbed" not in (entry["disturbance"] or "")
    # A disturbance on the side it cannot push (B disturbed, B faster) leaves the verdict, named beside it.
    entry = verdict("gemm", record([55.0, 56.0, 54.0]), record([100.0, 101.0, 99.0], disturbed=light, taken=0.1))
    assert entry["verdict"] == "faster" and "B 3/3 runs disturbed" in entry["disturbance"]
    # A GPU disturbance has no share: it could explain anything.
    entry = verdict("gemm", record([100.0, 101.0, 99.0]), record([55.0, 56.0, 54.0], disturbed="GPU throttled"))
    assert entry["verdict"] == "inconclusive"


def test_missing_sides_and_sorted_deterministic_output() -> None:
    before = {"b": record([1.0, 1.0, 1.0]), "only_before": record([1.0])}
    after = {"b": record([1.0, 1.0, 1.0]), "only_after": record([1.0])}
    first = compare_verdicts(before, after)
    assert first == compare_verdicts(before, after)
    assert [e["name"] for e in first] == ["b", "only_after", "only_before"]
    by_name = {e["name"]: e for e in first}
    assert by_name["only_before"]["direction"] == "missing" and by_name["only_before"]["verdict"] == "inconclusive"
    assert by_name["only_after"]["ratio"] is None


def test_more_runs_resolve_finer() -> None:
    assert mds_with_runs(0.03, 5) < mds_with_runs(0.03, 3) < mds_with_runs(0.03, 2)


def test_printed_before_after_and_percentage_come_from_one_estimator() -> None:
    # The stored median of each record (100 and 60) is not the geometric mean of its run medians.
    entry = verdict("gemm", record([100.0, 100.0, 130.0]), record([60.0, 60.0, 90.0]))
    assert entry["after"] / entry["before"] == pytest.approx(entry["ratio"])
    assert (entry["ratio"] - 1.0) * 100.0 == pytest.approx(entry["change_pct"], abs=0.01)
    assert entry["before"] == pytest.approx((100.0 * 100.0 * 130.0) ** (1 / 3))


def test_the_mds_shrinks_as_runs_grow_even_when_an_added_run_was_noisy() -> None:
    three = verdict("gemm", record([100.0, 101.0, 99.0]), record([100.0, 101.0, 99.0]))
    more = record([100.0, 101.0, 99.0] * 2)
    more["runs"][-1]["ci_rel"] = 0.6  # one of the added runs was very unsteady within itself
    six = verdict("gemm", more, record([100.0, 101.0, 99.0] * 2))
    assert six["mds_pct"] < three["mds_pct"]


def test_records_beyond_a_doubling_say_the_machine_cannot_resolve_it_and_project_nothing() -> None:
    entry = verdict("decode", record([100.0, 400.0, 30.0]), record([100.0, 20.0, 500.0]))
    assert entry["verdict"] == "inconclusive" and entry["mds_pct"] > 100.0
    assert entry["reason"].startswith("this machine cannot resolve it now (run-to-run spread ±")
    assert "--runs" not in entry["verdict_text"] and "MDS" not in entry["verdict_text"]
