"""Several runs into one record: every run's median kept, the spread beside the within-run CI, and a
disturbed run repeated once. The runs here are recorded-shape dictionaries; the child processes
themselves run in tests/baselines/test_bench_cli.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from driftcheck.analysis.explain import bench_moved
from driftcheck.baselines.repeated import between_runs, combine, merge_records, repeated_runs
from driftcheck.errors import OptionError, UsageError


def one_run(gemm: float, disturbed: str | None = None, taken: float = 0.0) -> dict:
    result = {"unit": "GFLOP/s", "higher_is_better": True, "n": 10, "median": gemm, "ci_low": gemm * 0.99,
              "ci_high": gemm * 1.01, "samples": [gemm] * 10}
    return {"suite": "quick", "device": "cpu", "elapsed_s": 20.0, "skipped": [], "warnings": [],
            "disturbance": {"disturbed": disturbed, "taken": taken}, "results": {"gemm_fp32_1024_gflops": result}}


def test_combine_keeps_every_median_and_the_spread() -> None:
    data = combine([one_run(100.0), one_run(90.0), one_run(110.0)])
    gemm = data["results"]["gemm_fp32_1024_gflops"]
    assert data["runs"] == 3 and data["elapsed_s"] == 60.0
    assert [r["median"] for r in gemm["runs"]] == [100.0, 90.0, 110.0]
    assert gemm["median"] == 100.0 and gemm["ci_low"] == pytest.approx(99.0)  # the median run's own CI
    assert gemm["between_runs"]["n_runs"] == 3 and 9.0 < gemm["between_runs"]["spread_pct"] < 11.0
    assert gemm["runs"][0]["ci_rel"] == pytest.approx(0.01)
    assert between_runs([5.0])["spread_pct"] is None


def test_records_taken_in_rounds_merge_into_one_record_of_all_their_runs() -> None:
    rounds = [combine([one_run(100.0)]), combine([one_run(80.0, disturbed="load 1.9 on 2 cores")]),
              combine([one_run(120.0)])]
    merged = merge_records(rounds)
    gemm = merged["results"]["gemm_fp32_1024_gflops"]
    assert [run["median"] for run in gemm["runs"]] == [100.0, 80.0, 120.0] and gemm["median"] == 100.0
    assert merged["runs"] == 3 and merged["elapsed_s"] == 60.0 and len(merged["run_reports"]) == 3
    assert merged["disturbed_runs"] == [2]
    assert gemm["between_runs"] == between_runs([100.0, 80.0, 120.0])
    # The same runs combined at once give the same figures the verdicts read.
    at_once = combine([one_run(100.0), one_run(80.0, disturbed="load 1.9 on 2 cores"), one_run(120.0)])
    assert at_once["results"]["gemm_fp32_1024_gflops"]["runs"] == gemm["runs"]
    with pytest.raises(ValueError):
        merge_records([])


def scripted(runs: list[dict]) -> Iterator[dict]:
    yield from runs


def test_a_disturbed_run_is_repeated_once_and_a_clean_repeat_replaces_it() -> None:
    busy = "other processes kept 1.50 of 2 CPUs busy"
    script = scripted([one_run(100.0), one_run(60.0, busy, 0.75), one_run(101.0), one_run(99.0)])
    lines: list[str] = []
    done = repeated_runs(lambda: next(script), 3, lines.append)
    assert [d["results"]["gemm_fp32_1024_gflops"]["median"] for d in done] == [100.0, 99.0, 101.0]
    assert done[1]["repeat"] == {"of_run": 2, "first_disturbance": busy, "kept": "repeat"}
    assert any("repeating it once" in line for line in lines)
    assert combine(done)["disturbed_runs"] == []


def test_repeats_are_bounded_and_the_less_disturbed_run_stays() -> None:
    busy, busier = "others 1.0 CPUs", "others 1.8 CPUs"
    script = scripted([one_run(50.0, busier, 0.9), one_run(60.0, busy, 0.5), one_run(70.0, busy, 0.5)])
    done = repeated_runs(lambda: next(script), 2)
    # Two runs allow one repeat: run 1's repeat was less disturbed, so it stays, still flagged.
    assert done[0]["results"]["gemm_fp32_1024_gflops"]["median"] == 70.0
    assert combine(done)["disturbed_runs"] == [1, 2]
    with pytest.raises(UsageError):
        repeated_runs(lambda: one_run(1.0), 0)


def test_inconclusive_rows_are_no_evidence_for_explain() -> None:
    rows = [{"name": "gemm", "verdict": "inconclusive", "significant": False},
            {"name": "copy", "verdict": "missing", "significant": False}]
    assert bench_moved(rows, lambda name: "compute") is None
    rows.append({"name": "decode", "verdict": "slower", "direction": "slower", "significant": True})
    assert bench_moved(rows, lambda name: "memory") == {"memory"}
    assert bench_moved([{"name": "gemm", "verdict": "unchanged"}], lambda name: "compute") == set()


def test_check_reruns_what_the_reference_ran() -> None:
    from driftcheck.api import BenchRequest, bench_rerun
    from driftcheck.snapshot.model import Snapshot

    def reference(bench: dict | None) -> Snapshot:
        probes = {"env": {"status": "ok", "data": {}}}
        if bench is not None:
            probes["bench"] = {"status": "ok", "data": bench}
        return Snapshot({"schema": 1, "created_at": "2026-12-01T00:00:00Z", "host": {"name": "h"}, "probes": probes},
                        "test")

    data = {"suite": "standard", "runs": 3, "budget_s": 40.0, "results": {"gemm": {"median": 1.0}}}
    recorded = reference(data)
    # The rerun measures only; benchmarks its runs leave undecided get up to twice the runs, which the check
    # asks for itself: the reference's record never travels to the probe.
    assert bench_rerun(recorded, None, None) == BenchRequest("standard", 3, 40.0, max_runs=6)
    assert bench_rerun(recorded, None, 5) == BenchRequest("standard", 5, 40.0, max_runs=10)
    assert bench_rerun(recorded, None, None, 3) == BenchRequest("standard", 3, 40.0, max_runs=3)
    assert "reference" not in BenchRequest().to_json()
    with pytest.raises(OptionError, match="at least the runs"):
        bench_rerun(recorded, None, 5, 4)
    # A check's own record as the reference: rerun as many runs as its first look took, not its extension.
    extended = reference({**data, "runs": 6, "looks": [3, 6]})
    assert bench_rerun(extended, None, None).runs == 3  # type: ignore[union-attr]
    assert bench_rerun(reference({**data, "runs": 1}), None, None).max_runs == 1  # type: ignore[union-attr]
    assert BenchRequest.from_json(BenchRequest("standard", 3, 40.0, 6, 3).to_json()) == \
        BenchRequest("standard", 3, 40.0, 6, 3)
    assert bench_rerun(recorded, False, None) is None
    assert bench_rerun(reference(None), None, None) is None
    with pytest.raises(UsageError, match="no benchmark results"):
        bench_rerun(reference(None), True, None)
