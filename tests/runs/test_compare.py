"""Two runs compared: figure changes (direction from the unit) and telemetry findings."""

from __future__ import annotations

from typing import Any

from driftcheck.runs.compare import compare_runs, metric_changes
from driftcheck.runs.metrics import Metric
from driftcheck.runs.store import RunRecord


def _run(run_id: int, metrics: list[tuple[str, float, str | None]], telemetry: dict[str, Any] | None = None
         ) -> RunRecord:
    return RunRecord(["bench"], "/", "node", "2026-12-01T00:00:00Z", 10.0, 0, f"{run_id:064x}",
                     metrics=[Metric(n, v, u, n.replace("_", " "), "test") for n, v, u in metrics],
                     telemetry=telemetry or {}, id=run_id)


def test_changes_rates_first_with_direction_from_the_unit() -> None:
    a = _run(12, [("mean_ttft", 40.0, "ms"), ("output_token_throughput", 94.1, "tok/s"), ("steps", 10, None),
                  ("only_in_a", 1.0, "ms"), ("mixed", 1.0, "s")])
    b = _run(15, [("mean_ttft", 52.0, "ms"), ("output_token_throughput", 60.3, "tok/s"), ("steps", 12, None),
                  ("mixed", 1000.0, "ms")])
    changes = metric_changes(a, b)
    assert [c.name for c in changes] == ["output_token_throughput", "mean_ttft", "steps"]
    assert changes[0].text() == "output token throughput: 94.1 \u2192 60.3 tok/s (\u221236%) worse"
    assert changes[1].text() == "mean ttft: 40 \u2192 52 ms (+30%) worse"
    assert changes[2].worse is None and changes[2].text() == "steps: 10 \u2192 12 (+20%)"


def test_small_changes_keep_a_decimal_and_no_change_has_no_verdict() -> None:
    a = _run(1, [("decode", 100.0, "tok/s"), ("same", 5.0, "ms")])
    b = _run(2, [("decode", 98.8, "tok/s"), ("same", 5.0, "ms")])
    texts = [c.text() for c in metric_changes(a, b)]
    assert texts == ["decode: 100 \u2192 98.8 tok/s (\u22121.2%) worse", "same: 5 \u2192 5 ms (+0.0%)"]


def _telemetry(hw_fraction: float, clock: float, steal: float) -> dict[str, Any]:
    conditions = [{"gpu": "GPU-a", "label": "GPU 3", "kind": "hw_slowdown", "seconds": hw_fraction * 100,
                   "fraction": hw_fraction}] if hw_fraction else []
    return {"gpus": {"GPU-a": {"index": 3, "sm_mhz": {"min": clock, "median": clock, "max": clock}}},
            "cpu": {"steal_pct": {"min": steal, "median": steal, "max": steal}}, "conditions": conditions}


def test_telemetry_findings_name_the_gpu_and_both_runs() -> None:
    a = _run(12, [("output_token_throughput", 94.1, "tok/s")], _telemetry(0.0, 1980, 0.5))
    b = _run(15, [("output_token_throughput", 60.3, "tok/s")], _telemetry(0.41, 1410, 9.0))
    comparison = compare_runs(a, b)
    titles = [f.title for f in comparison.findings]
    assert titles[0] == "GPU 3 spent 41% of run 15 in HW slowdown; 0% in run 12"
    assert "GPU 3 ran at a median SM clock of 1410 MHz in run 15, 1980 MHz in run 12" in titles
    assert "the hypervisor took a median 9% of CPU time in run 15, 0% in run 12" in titles
    assert comparison.findings[0].category == "thermal"
    assert "nvidia-smi -i 3" in comparison.findings[0].fix


def test_a_condition_that_went_away_explains_a_recovery() -> None:
    a = _run(1, [("tput", 60.0, "tok/s")], _telemetry(0.5, 1980, 0.0))
    b = _run(2, [("tput", 94.0, "tok/s")], _telemetry(0.0, 1980, 0.0))
    (finding,) = compare_runs(a, b).findings
    assert finding.title == "GPU 3 spent 0% of run 2 in HW slowdown; 50% in run 1"
    assert finding.confidence > 0.7


def test_a_condition_in_the_faster_run_is_weak_evidence() -> None:
    a = _run(1, [("tput", 60.0, "tok/s")], _telemetry(0.0, 1980, 0.0))
    b = _run(2, [("tput", 94.0, "tok/s")], _telemetry(0.5, 1980, 0.0))
    (finding,) = compare_runs(a, b).findings
    assert finding.confidence < 0.5
