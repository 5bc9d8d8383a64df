"""compare_results / compare_records: the face diff, explain and check call, over the verdicts."""

from __future__ import annotations

from driftcheck.analysis.bench_verdicts import compare_records, compare_results
from tests.between import steady


def runs(*medians: float, unit: str = "GFLOP/s") -> dict:
    return {"unit": unit, "higher_is_better": unit != "us", "median": sorted(medians)[len(medians) // 2],
            "runs": [{"median": m, "ci_rel": 0.004} for m in medians]}


def test_entries_keep_the_keys_earlier_consumers_read() -> None:
    # On a host whose sessions were measured not to differ (tests/between.py): the keys are what this tests.
    [entry] = compare_results({"gemm": runs(100.0, 101.0, 99.0)}, {"gemm": runs(60.0, 61.0, 59.5)},
                              between={"gemm": steady()})
    assert {"name", "unit", "before", "after", "ratio", "significant", "direction"} <= set(entry)
    assert {"verdict", "mds_pct", "spread_pct", "runs", "disturbance", "verdict_text"} <= set(entry)
    assert entry["direction"] == entry["verdict"] == "slower" and entry["significant"] is True
    assert 0.59 < entry["ratio"] < 0.61


def test_records_compare_on_the_device_b_ran_on() -> None:
    # One run a side: the assumed spread is the device's; a GPU's default is tighter than a CPU's.
    before = {"device": "cuda", "results": {"gemm": runs(100.0)}}
    after = {"device": "cuda", "results": {"gemm": runs(70.0)}}
    on_gpu = compare_records(before, after)[0]
    on_cpu = compare_records({**before, "device": "cpu"}, {**after, "device": "cpu"})[0]
    assert on_gpu["mds_pct"] < on_cpu["mds_pct"]
    assert on_gpu["verdict"] == "slower" and on_cpu["verdict"] == "inconclusive"
