"""Slow nodes by measurement (`driftcheck.analysis.fleet_bench`) on five real records of the quick suite, taken on
the 2-core VM under other load (tests/data/fleet_bench/loaded/SOURCE), and on copies of them edited as named."""

from __future__ import annotations

import copy
import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from driftcheck.analysis.fleet_bench import (
    MIN_HOSTS,
    fleet_reason,
    judge_benchmark,
    judge_fleet,
    judge_host,
    row_text,
)
from driftcheck.analysis.fleet_bench_render import render_measured_markdown, render_measured_text
from driftcheck.stats.prediction import median_variance

LOADED = Path(__file__).resolve().parent.parent / "data" / "fleet_bench" / "loaded"
GEMM = "gemm_fp32_1024_gflops"


@pytest.fixture
def loaded() -> dict[str, dict[str, Any]]:
    """node1..node5 as recorded (node5 with OMP_NUM_THREADS=1); every run flagged disturbed by other load."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(LOADED.glob("node*.json"))}


def quiet(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with its runs' disturbance flags taken out: the same figures, as though nothing else ran."""
    out = copy.deepcopy(record)
    for entry in out["results"].values():
        for run in entry["runs"]:
            run.pop("disturbed", None)
    return out


def scaled(record: dict[str, Any], name: str, factor: float) -> dict[str, Any]:
    """`record` with benchmark `name`'s figures (every run's median, and the median) multiplied by `factor`."""
    out = copy.deepcopy(record)
    entry = out["results"][name]
    entry["median"] *= factor
    for run in entry["runs"]:
        run["median"] *= factor
    return out


def test_under_other_load_no_host_is_named_and_each_says_why(loaded: dict[str, dict[str, Any]]) -> None:
    bench = judge_fleet(loaded)
    assert bench.judged and bench.note is None
    assert bench.outliers == [] and bench.named("inconclusive") == sorted(loaded)
    for host in bench.hosts.values():
        rows = host.benchmarks()
        assert {row["name"] for row in rows} == set(loaded[host.host]["results"])
        # A loss or gain the load could explain is held, as a check holds it, in the fleet's words.
        held = [row for row in rows if row.get("held_by") == "load"]
        assert held, [row_text(row) for row in rows]
        assert all("disturbed by other work (fleet " in row_text(row) and ", this host " in row_text(row)
                   for row in held)
        assert "A " not in row_text(held[0]).split("(")[1]
    text = render_measured_text(bench)
    assert text.startswith("Measured:\n  5 hosts measured (quick suite on cpu, 2 runs a host); each host compared")
    assert "by measurement" not in text and "within the fleet's spread" not in text


def host_figure(record: dict[str, Any], name: str = GEMM) -> float:
    """A host's figure of a benchmark: the median log of its run medians (for two runs, their mean)."""
    return statistics.median(math.log(run["median"]) for run in record["results"][name]["runs"])


def floored_t(host: dict[str, Any], others: list[dict[str, Any]],
              name: str = GEMM) -> tuple[float, float, float, float]:
    """scipy's pooled two-sample t (a group of one against the others' figures) and its two-sided p, with the
    others' spread taken no lower than the runs' floor: the pooled within-host sd of the log runs, times the
    square root of a median's variance for the others' run count (half a run's variance for two runs, as a mean).
    Also the others' spread and the floor."""
    figures = [host_figure(record, name) for record in others]
    oracle = stats.ttest_ind([host_figure(host, name)], figures, equal_var=True)
    runs = [[math.log(run["median"]) for run in record["results"][name]["runs"]] for record in [*others, host]]
    squares = sum(sum((x - statistics.fmean(logs)) ** 2 for x in logs) for logs in runs if len(logs) > 1)
    df = sum(len(logs) - 1 for logs in runs)
    per_host = round(statistics.median(len(logs) for logs in runs[:-1]))
    floor = math.sqrt(squares / df * median_variance(per_host))
    spread = statistics.stdev(figures)
    t = oracle.statistic * spread / max(spread, floor)
    return t, 2 * stats.t.sf(abs(t), len(figures) - 1), spread, floor


def test_a_host_is_judged_by_the_prediction_for_one_more_host_of_the_others(
        loaded: dict[str, dict[str, Any]]) -> None:
    others = [record for host, record in loaded.items() if host != "node1"]
    row = next(r for r in judge_host("node1", loaded) if r["name"] == GEMM)
    # The test is scipy's pooled two-sample t-test of a group of one against the four others' figures.
    t, p, spread, floor = floored_t(loaded["node1"], others)
    assert row["t"] == pytest.approx(t, abs=1e-4) and row["p"] == pytest.approx(p)
    # The fleet's figure is the others' centre (geometric), the host's its runs' median (of two, the geometric
    # mean).
    centre = sum(host_figure(r) for r in others) / len(others)
    assert row["before"] == pytest.approx(math.exp(centre))
    assert row["after"] == pytest.approx(math.exp(host_figure(loaded["node1"])))
    assert row["runs"] == [sum(len(r["results"][GEMM]["runs"]) for r in others),
                           len(loaded["node1"]["results"][GEMM]["runs"])]
    # The others' spread between hosts is shown: 4 hosts, 3 degrees of freedom, as ±%.
    assert spread == pytest.approx(stats.tstd([host_figure(r) for r in others]))
    assert row["between_sessions"] == {"spread_pct": pytest.approx(math.expm1(spread) * 100, abs=0.01),
                                       "measured": True, "sessions": 4, "df": 3}
    # The verdict counts it, or the runs' floor where that is larger: these loaded runs spread so widely within
    # each host that a median of two varies more than the five hosts' figures happened to.
    assert floor > spread
    # Its MDS is t at 1%/5 with 3 df times that spread times sqrt(1 + 1/4).
    mds = stats.t.ppf(1 - 0.002 / 2, 3) * max(spread, floor) * math.sqrt(1 + 1 / 4)
    assert row["mds_pct"] == pytest.approx(max(math.expm1(mds), 0.02) * 100, abs=0.01)
    # The controls are not used: across machines a machine slower at everything is what is looked for.
    assert row["control"] == {"recorded": False, "note": row["control"]["note"]}


def test_five_hosts_this_noisy_cannot_tell_a_quarter_of_the_speed_and_say_why(
        loaded: dict[str, dict[str, Any]]) -> None:
    fleet = {host: quiet(record) for host, record in loaded.items()}
    assert judge_fleet(fleet).outliers == []
    fleet["node3"] = scaled(fleet["node3"], GEMM, 1 / 4)
    bench = judge_fleet(fleet)
    # Five hosts asked about at once: each at a fifth of the check's 1%, on the 4 others' spread (3 df, t 10.2).
    # Under that load the others' GEMMs lie 13.9 to 45.3 GFLOP/s apart: even a quarter cannot be told.
    assert bench.alpha_each_host == pytest.approx(0.002)
    assert "each host at 0.2% (the check's 1% shared among the hosts)" in render_measured_text(bench)
    assert bench.outliers == [] and bench.hosts["node3"].verdict == "inconclusive"
    row = next(row for row in bench.hosts["node3"].rows if row["name"] == GEMM)
    assert row["change_pct"] < -70 and abs(math.log1p(row["change_pct"] / 100)) < math.log1p(row["mds_pct"] / 100)
    assert "cannot be told" in row_text(row) and row["held_by"] is None
    gemm = next(b for b in bench.to_json()["hosts"]["node3"]["benchmarks"] if b["name"] == GEMM)
    assert gemm["between_hosts"] == {"spread_pct": row["between_sessions"]["spread_pct"], "measured": True,
                                     "hosts": 4, "df": 3}


# Eight machines a few percent apart (every figure of node i scaled by its factor), each GEMM's two runs as listed:
# node4's is about half the others', as OMP_NUM_THREADS=1 leaves it on a quiet 2-core machine (README).
FACTORS = (1.00, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.00)
GEMM_RUNS = ((151.0, 147.0), (158.0, 160.0), (146.0, 149.0), (77.0, 79.5), (143.0, 147.0), (155.0, 152.0),
             (149.0, 145.0), (150.0, 153.0))


def eight_machines(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Eight hosts made of one real record (its runs' disturbance flags taken out): node i's figures all scaled
    by FACTORS[i], its GEMM runs set to GEMM_RUNS[i]."""
    fleet = {}
    for i, (factor, gemm_runs) in enumerate(zip(FACTORS, GEMM_RUNS, strict=True)):
        host = quiet(record)
        for name in host["results"]:
            host = scaled(host, name, factor)
        entry = host["results"][GEMM]
        for run, median in zip(entry["runs"], gemm_runs, strict=True):
            run["median"] = median
        entry["median"] = sorted(gemm_runs)[0] / 2 + sorted(gemm_runs)[1] / 2
        fleet[f"node{i + 1}"] = host
    return fleet


def test_eight_hosts_name_the_one_at_half_the_gemm_speed_and_no_other(loaded: dict[str, dict[str, Any]]) -> None:
    fleet = eight_machines(loaded["node2"])
    bench = judge_fleet(fleet)
    assert bench.alpha_each_host == pytest.approx(0.01 / 8)
    assert (bench.named("slower"), bench.named("faster")) == (["node4"], [])
    row = next(row for row in bench.hosts["node4"].rows if row["name"] == GEMM)
    assert row["verdict"] == "slower" and row["change_pct"] < -45
    assert abs(math.log1p(row["change_pct"] / 100)) >= math.log1p(row["mds_pct"] / 100)
    others = [host_figure(record) for host, record in fleet.items() if host != "node4"]
    oracle = stats.ttest_ind([host_figure(fleet["node4"])], others, equal_var=True)
    assert row["t"] == pytest.approx(oracle.statistic, abs=1e-4) and row["p"] < 0.01 / 8
    document = bench.to_json()
    node4 = document["hosts"]["node4"]
    assert document["slower"] == ["node4"] and node4["verdict"] == "slower"
    gemm = next(b for b in node4["benchmarks"] if b["name"] == GEMM)
    assert gemm["fleet"] > gemm["host"] > 0 and gemm["reason"] is None
    assert gemm["between_hosts"] == {"spread_pct": row["between_sessions"]["spread_pct"], "measured": True,
                                     "hosts": 7, "df": 6}
    text = render_measured_text(bench)
    assert "  node4: slower (MDS ±" in text and f"    {GEMM} " in text and "slower by measurement: node4" in text
    # Among the others, node4 widens the GEMM's spread (to ±27-29%): their GEMMs cannot be told, none is named.
    assert all(27 < r["between_sessions"]["spread_pct"] < 29 and "differ by" in row_text(r)
               for host in bench.hosts.values() if host.host != "node4" for r in host.rows if r["name"] == GEMM)
    # The seven others alone: no host named, and their GEMMs within ±26%.
    alone = judge_fleet({host: r for host, r in fleet.items() if host != "node4"})
    assert alone.outliers == [] and all(r["mds_pct"] < 27 for host in alone.hosts.values() for r in host.rows
                                        if r["name"] == GEMM)


def test_a_loss_on_a_host_whose_runs_were_disturbed_is_held_and_says_so(loaded: dict[str, dict[str, Any]]) -> None:
    fleet = eight_machines(loaded["node2"])
    fleet["node4"]["results"][GEMM]["runs"][1]["disturbed"] = "other processes kept 1.2 of 2 CPUs busy"
    bench = judge_fleet(fleet)
    assert bench.outliers == [] and bench.hosts["node4"].verdict == "inconclusive"
    row = next(row for row in bench.hosts["node4"].rows if row["name"] == GEMM)
    assert row["held_by"] == "load" and abs(math.log1p(row["change_pct"] / 100)) >= math.log1p(row["mds_pct"] / 100)
    assert row_text(row).endswith(": inconclusive - disturbed by other work (this host 1/2 runs disturbed (worst: "
                                  "other processes kept 1.2 of 2 CPUs busy)): that could explain it")


def test_a_host_is_not_named_on_one_run_that_stalled(loaded: dict[str, dict[str, Any]]) -> None:
    # As measured on eight quiet real-sshd hosts: one GEMM run of an unchanged host at half its other's figure.
    fleet = {host: record for host, record in eight_machines(loaded["node2"]).items() if host != "node4"}
    entry = fleet["node3"]["results"][GEMM]
    entry["runs"][1]["median"] = 75.0
    bench = judge_fleet(fleet)
    row = next(row for row in bench.hosts["node3"].rows if row["name"] == GEMM)
    # The stall spreads the runs: a median of two (their mean) varies by as much, so the MDS widens past the
    # shift (the runs' floor), and more runs are advised.
    assert abs(math.log1p(row["change_pct"] / 100)) < math.log1p(row["mds_pct"] / 100)
    assert row["verdict"] == "inconclusive" and bench.outliers == []
    assert "runs spread ±" in row_text(row) and "more runs, --runs, would narrow it" in row_text(row)
    # Both runs that low: named.
    entry["runs"][0]["median"] = 76.0
    assert judge_fleet(fleet).named("slower") == ["node3"]


def with_third_gemm_run(fleet: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`fleet` with a third GEMM run on every host, at the geometric mean of its two: its figure does not move."""
    out = copy.deepcopy(fleet)
    for record in out.values():
        runs = record["results"][GEMM]["runs"]
        runs.append({**runs[0], "median": math.sqrt(runs[0]["median"] * runs[1]["median"])})
    return out


def test_with_three_runs_a_host_figure_is_their_median_and_one_stalled_run_does_not_move_it(
        loaded: dict[str, dict[str, Any]]) -> None:
    fleet = with_third_gemm_run({host: r for host, r in eight_machines(loaded["node2"]).items() if host != "node4"})
    # node3's GEMM runs 146, 149 and, stalled, 40: their mean log (figure 95.5) lies a third below the others'
    # (beyond the MDS: held by the runs rule at best), their median is the run at 146.
    fleet["node3"]["results"][GEMM]["runs"][2]["median"] = 40.0
    row = next(r for r in judge_host("node3", fleet) if r["name"] == GEMM)
    assert row["after"] == pytest.approx(146.0)
    assert math.exp(statistics.fmean(math.log(r["median"]) for r in fleet["node3"]["results"][GEMM]["runs"])) < 100
    t, *_ = floored_t(fleet["node3"], [record for host, record in fleet.items() if host != "node3"])
    assert row["t"] == pytest.approx(t, abs=1e-4)
    assert abs(row["change_pct"]) < 5 and row["held_by"] is None and row["verdict"] in ("unchanged", "inconclusive")
    assert judge_fleet(fleet).outliers == []


def test_with_three_runs_a_host_is_named_only_where_each_run_lies_beyond_the_mds(
        loaded: dict[str, dict[str, Any]]) -> None:
    fleet = with_third_gemm_run(eight_machines(loaded["node2"]))
    # node4 at half the others' GEMM in all three runs: named.
    assert judge_fleet(fleet).named("slower") == ["node4"]
    # Two runs at half, one at full speed: the median lies beyond the MDS, but one run does not: held by the runs.
    fleet["node4"]["results"][GEMM]["runs"][2]["median"] = 150.0
    bench = judge_fleet(fleet)
    row = next(r for r in bench.hosts["node4"].rows if r["name"] == GEMM)
    assert row["after"] == pytest.approx(79.5)
    assert abs(math.log1p(row["change_pct"] / 100)) >= math.log1p(row["mds_pct"] / 100)
    assert bench.outliers == [] and row["held_by"] == "runs"
    assert row_text(row).endswith("1 of its 3 runs within the MDS of the fleet's centre: its runs' median lies "
                                  "beyond it, but a run that stalled could explain that (more runs, --runs, would "
                                  "tell)")


def test_more_runs_are_advised_by_a_median_s_variance_not_a_mean_s() -> None:
    # Three runs a host, runs spread ±30% (log 0.262), the other hosts ±24% (log 0.215). The runs' part of a host's
    # figure is 0.449 * 0.262^2 = 0.031 for a median of three, above half the hosts' spread squared (0.023): more
    # runs are advised. A mean's 0.262^2 / 3 = 0.0229 would have been just below it.
    row = {"verdict": "inconclusive", "direction": "inconclusive", "mds_pct": 150.0, "spread_pct": 30.0,
           "spread_measured": True, "runs": [21, 3],
           "between_sessions": {"spread_pct": 24.0, "measured": True, "sessions": 7, "df": 6}}
    assert math.log1p(0.30) ** 2 / 3 < math.log1p(0.24) ** 2 / 2 < math.log1p(0.30) ** 2 * 0.4487
    assert fleet_reason(row) == ("runs spread ±30.0% on these hosts (more runs, --runs, would narrow it): shifts "
                                 "under ±150.0% cannot be told")
    # Hosts that differ by ±35%: the hosts' part is the larger either way.
    row["between_sessions"]["spread_pct"] = 35.0
    assert fleet_reason(row) == ("the other 7 hosts differ by ±35.0% between themselves: shifts under ±150.0% "
                                 "cannot be told")


def test_a_benchmark_two_other_hosts_measured_far_apart_gives_an_mds_too_wide_to_tell_not_an_overflow() -> None:
    # Found by benchmarks/fleet_bench_sensitivity.py on loaded real runs: a benchmark that most hosts skipped within
    # their budget, measured by two others at 1 and 1000: one degree of freedom, t at 1%/8 near 509, an MDS of
    # exp(3000) - 1, which expm1 cannot return.
    def entry(median: float) -> dict[str, Any]:
        return {"unit": "tok/s", "higher_is_better": True, "median": median, "runs": [{"median": median}]}

    row = judge_benchmark("decode_eager_tok_per_s", entry(30.0), [entry(1.0), entry(1000.0)], family=8)
    assert row["verdict"] == "inconclusive" and row["mds_pct"] == pytest.approx(1e8)
    assert row_text(row).startswith("decode_eager_tok_per_s 30 tok/s, fleet 31.62: -5.1% (MDS ±>1000%): inconclusive")


def test_fewer_than_three_hosts_are_too_few_to_judge(loaded: dict[str, dict[str, Any]]) -> None:
    two = {host: loaded[host] for host in ("node1", "node2")}
    bench = judge_fleet(two)
    assert MIN_HOSTS == 3 and not bench.judged
    assert bench.note == "fleet too small to judge by measurement: 2 hosts measured on cpu, 3 needed"
    assert all(host.verdict is None and host.rows == [] for host in bench.hosts.values())
    assert bench.to_json()["hosts"]["node1"]["figures"][GEMM]["value"] == pytest.approx(
        loaded["node1"]["results"][GEMM]["median"])
    text = render_measured_text(bench)
    assert "  fleet too small to judge by measurement: 2 hosts measured on cpu, 3 needed\n" in text
    assert "  node1: device_copy_64mib_gbps 10.68 GB/s, gemm_fp32_1024_gflops 27.6 GFLOP/s" in text


def test_failed_hosts_and_another_device_are_listed_with_why(loaded: dict[str, dict[str, Any]]) -> None:
    fleet = dict(loaded)
    fleet["gpu1"] = {**loaded["node1"], "device": "cuda"}
    bench = judge_fleet(fleet, {"node9": "bench unavailable: torch is not installed"})
    assert bench.judged and "gpu1" not in bench.named("inconclusive")
    assert bench.other_device == {"gpu1": "measured on cuda, the fleet on cpu: not compared"}
    assert bench.to_json()["failures"] == {"node9": "bench unavailable: torch is not installed"}
    text = render_measured_text(bench)
    assert "  gpu1: measured on cuda, the fleet on cpu: not compared\n" in text
    assert "  bench failed:\n    node9: bench unavailable: torch is not installed\n" in text
    markdown = render_measured_markdown(bench)
    assert markdown.startswith("\n## Measured\n\n- 6 hosts measured") and "  - node9: bench unavailable" in markdown


def test_an_unchanged_host_slowed_by_other_work_is_held_by_its_disturbance() -> None:
    burst = {path.stem: json.loads(path.read_text())
             for path in sorted((LOADED.parent / "load-burst").glob("node*.json"))}
    bench = judge_fleet(burst)
    assert bench.outliers == []
    node4 = {row["name"]: row for row in bench.hosts["node4"].rows}
    skinny = node4["skinny_gemm_fp32_b4_h4096_gbps"]
    assert skinny["change_pct"] < -70 and skinny["verdict"] == "inconclusive" and skinny["held_by"] == "load"
    assert "disturbed by other work" in row_text(skinny)
    # The decode benchmarks it skipped within its budget count for nothing, either way.
    assert node4["decode_eager_tok_per_s"]["direction"] == "missing"
    assert "decode_eager_tok_per_s" not in {row["name"] for row in bench.hosts["node4"].benchmarks()}
    # Without their disturbance flags the same figures are held by the machines' spread instead, not by load.
    quiet_skinny = next(row for row in judge_fleet({host: quiet(record) for host, record in burst.items()})
                        .hosts["node4"].rows if row["name"] == "skinny_gemm_fp32_b4_h4096_gbps")
    assert quiet_skinny["verdict"] == "inconclusive" and quiet_skinny["held_by"] != "load"
    assert "differ by" in row_text(quiet_skinny) or "cannot be told" in row_text(quiet_skinny)


def test_a_fleet_where_no_host_measured_says_so_once_and_names_no_device() -> None:
    # Every host failed before its bench (a typo, the network down): there is no device and no count to give.
    bench = judge_fleet({})
    assert not bench.judged
    assert bench.note == f"fleet too small to judge by measurement: no host measured, {MIN_HOSTS} needed"
    assert render_measured_text(bench) == f"Measured:\n  no host measured\n  {bench.note}\n"


def test_others_that_happen_to_agree_do_not_narrow_the_mds_below_what_their_runs_spread() -> None:
    # Shaped after a real-sshd try alone on 2026-12-06: six unchanged hosts' GEMM medians within ±2%, their runs
    # spread ±17% within each host (118 to 193), and a seventh unchanged host whose three runs all fell low (~102):
    # judged by the hosts' spread alone its MDS was ±15% and it was named 37% slower. A median of three runs varies
    # by 0.67 of a run's spread however closely six hosts happened to agree: the MDS is floored there (±102%), the
    # unchanged host is inconclusive, and the host at one thread (~72, every run) is still named.
    def entry(runs: list[float]) -> dict[str, Any]:
        return {"unit": "GFLOP/s", "higher_is_better": True, "median": sorted(runs)[1],
                "runs": [{"median": value} for value in runs]}

    others = [entry(runs) for runs in ([193, 157, 141], [166, 190, 150], [141, 160, 193], [162, 118, 177],
                                       [152, 190, 165], [118, 164, 171])]
    low = judge_benchmark(GEMM, entry([102.0, 100.0, 104.0]), others, family=7)
    assert low["between_sessions"]["spread_pct"] < 3 and low["spread_pct"] > 15
    assert low["verdict"] == "inconclusive" and low["change_pct"] < -35 and low["mds_pct"] > 100
    assert "runs spread ±16.6% on these hosts (more runs, --runs, would narrow it)" in fleet_reason(low)
    slowed = judge_benchmark(GEMM, entry([71.0, 74.0, 70.0]), others, family=7)
    assert slowed["verdict"] == "slower" and slowed["change_pct"] < -55
