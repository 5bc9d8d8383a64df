"""The CPU quota's throttling during a run: the share of the run's periods it stopped the cgroup, in the
run summary and as a run cause, from real series (tests/data/runs/SOURCES.md) and a real cgroup recording."""

from __future__ import annotations

import json
from typing import Any

from driftcheck.hosts import ReplayHost
from driftcheck.runs.compare import compare_runs
from driftcheck.runs.cpu_samples import CpuReader
from driftcheck.runs.metrics import Metric
from driftcheck.runs.store import RunRecord
from driftcheck.runs.summary import condition_text, summarize
from tests.conftest import DATA

RUNS = DATA / "runs"


def _series(name: str) -> dict[str, Any]:
    return dict(json.loads((RUNS / f"{name}.series.json").read_text("utf-8")))


def _run(run_id: int, rate: float, telemetry: dict[str, Any]) -> RunRecord:
    return RunRecord(["python3", "spin.py"], "/", "node", "2026-12-02T00:13:34Z", 4.2, 0, f"{run_id:064x}",
                     metrics=[Metric("spin_rate", rate, "it/s", "spin rate", "test")], telemetry=telemetry,
                     id=run_id)


def test_throttled_share_of_a_real_run_under_a_quota() -> None:
    summary = summarize(_series("cpu-quota-throttled"))
    assert summary["cpu"]["quota_throttled"] == {"periods": 40, "throttled": 13, "fraction": 0.325,
                                                 "throttled_s": 0.2}
    (condition,) = summary["conditions"]
    assert condition_text(condition, "run 2") == \
        "the container's CPU quota throttled 32% of the periods of run 2 (0.2 s)"


def test_no_quota_no_condition() -> None:
    summary = summarize(_series("cpu-no-quota"))
    assert summary["cpu"]["quota_throttled"] == {"periods": 0, "throttled": 0, "fraction": 0.0, "throttled_s": 0.0}
    assert summary["conditions"] == []


def test_a_series_without_counters_has_no_share() -> None:
    series = _series("cpu-no-quota")
    for name in ("nr_periods", "nr_throttled", "throttled_usec"):
        del series["cpu"][name]
    assert summarize(series)["cpu"]["quota_throttled"] is None


def test_throttling_is_a_run_cause_with_a_fix() -> None:
    a = _run(1, 2798177.0, summarize(_series("cpu-no-quota")))
    b = _run(2, 2965874.0, summarize(_series("cpu-quota-throttled")))
    (finding,) = compare_runs(a, b).findings
    assert finding.category == "container_limits"
    assert finding.title == "the container's CPU quota throttled 32% of the periods of run 2; 0% in run 1"
    assert finding.evidence == "runs.telemetry.cpu.quota_throttled.fraction"
    assert "docker update --cpus" in finding.fix


def test_reader_finds_the_quota_cgroup_of_a_recording() -> None:
    reading = CpuReader(ReplayHost(DATA / "hosts" / "debian12-vm-quota-throttled")).read()
    assert (reading["nr_periods"], reading["nr_throttled"], reading["throttled_usec"]) == (73, 24, 494952)
