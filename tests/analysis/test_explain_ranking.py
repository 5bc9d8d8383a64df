"""Ranking against benchmark evidence, the rule catalog's loader and patterns, and --confirm.

Benchmark evidence goes through the real comparison (driftcheck.analysis.bench_verdicts, a seeded bootstrap
on the kept samples); the results here carry samples spread ±1% around their median.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain, explain_report, version_order
from driftcheck.analysis.rules import default_catalog, parse_catalog
from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.model import Snapshot, read_snapshot_file
from driftcheck.snapshot.patterns import compile_pattern
from tests.between import steady_between

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
G0 = "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"


def _bench(allreduce: float, gemm: float) -> dict[str, Any]:
    def result(unit: str, median: float) -> dict[str, Any]:
        samples = [median * (1 + (i - 10) / 1000) for i in range(21)]  # 21 samples, ±1%, median exact
        return {"unit": unit, "n": 21, "median": median, "p10": median * 0.992, "p90": median * 1.008,
                "mad": median * 0.005, "cv": 0.006, "ci_low": median * 0.995, "ci_high": median * 1.005,
                "samples": samples, "clocks_before": {}, "clocks_after": {}}
    # On a host whose sessions were measured not to differ (tests/between.py): these tests are of ranking by the
    # verdicts, not of the between-session spread a verdict against the past now counts.
    return {"status": "ok", "error": None, "duration_s": 9.0, "data": {
        "suite": "quick", "device": "cuda",
        "results": {"allreduce_busbw_GBps": result("GB/s", allreduce), "gemm_bf16_TFLOPs": result("TFLOP/s", gemm)},
        "between_sessions": steady_between("allreduce_busbw_GBps", "gemm_bf16_TFLOPs")}}


def _two_causes(bench_a: dict[str, Any] | None, bench_b: dict[str, Any] | None) -> tuple[Snapshot, Snapshot]:
    """A: the base; B: NCCL_P2P_DISABLE=1 set, the power limit of GPU 0 lowered, torch upgraded."""
    a = copy.deepcopy(read_snapshot_file(PAIRS / "nccl-env-added" / "a.json").document)
    b = copy.deepcopy(a)
    b["probes"]["env"]["data"]["vars"]["NCCL_P2P_DISABLE"] = "1"
    b["probes"]["gpu"]["data"]["gpus"][G0]["power"]["limit_w"] = 500.0
    b["probes"]["packages"]["data"]["packages"]["torch"]["version"] = "2.14.0+cpu"
    if bench_a and bench_b:
        a["probes"]["bench"], b["probes"]["bench"] = bench_a, bench_b
    return Snapshot(a), Snapshot(b)


def _order(a: Snapshot, b: Snapshot) -> list[str]:
    return [e.rule for e in explain(diff_snapshots(a, b)).explanations]


def test_without_bench_evidence_priors_decide() -> None:
    assert _order(*_two_causes(None, None)) == ["nccl-env-added", "gpu-power-limit-lowered", "package-upgraded"]


def test_allreduce_fell_gemm_did_not_communication_first() -> None:
    a, b = _two_causes(_bench(400, 700), _bench(200, 700))
    assert _order(a, b)[0] == "nccl-env-added"
    report = explain_report(explain(diff_snapshots(a, b)))
    assert [row["name"] for row in report["bench"]] == ["allreduce_busbw_GBps", "gemm_bf16_TFLOPs"]
    assert report["bench"][0]["significant"] is True and report["bench"][1]["significant"] is False


def test_gemm_fell_with_the_power_limit_compute_first() -> None:
    assert _order(*_two_causes(_bench(400, 700), _bench(400, 560)))[0] == "gpu-power-limit-lowered"


def test_nothing_moved_software_first() -> None:
    assert _order(*_two_causes(_bench(400, 700), _bench(401, 699)))[0] == "package-upgraded"


def test_patterns_match_parts_not_printed_paths() -> None:
    pattern = compile_pattern("probes.kernels.data.files.<file:flashinfer*>.sha256")
    assert pattern.match(("probes", "kernels", "data", "files", "flashinfer-python:lib/x.so", "sha256")) == \
        {"file": "flashinfer-python:lib/x.so"}
    assert pattern.match(("probes", "kernels", "data", "files", "torch:x.so", "sha256")) is None
    assert compile_pattern("probes.**.limit_w").match(("probes", "gpu", "data", "gpus", "G", "power", "limit_w")) == {}
    assert compile_pattern("a.b|c").match(("a", "c")) == {}
    assert compile_pattern("a.b|c").match(("a", "d")) is None


@pytest.mark.parametrize("document, message", [
    ({"rules": [{"id": "x", "category": "nope", "match": "a", "title": "t", "fix": "f"}]}, "unknown category"),
    ({"rules": [{"id": "x", "category": "other", "match": "a"}]}, "needs a `title` and a `fix`"),
    ({"rules": [{"id": "x", "category": "other", "match": "a", "title": "t", "fix": "f", "prior": 2}]}, "prior"),
    ({"rules": [{"id": "x", "category": "other", "match": "a..b", "title": "t", "fix": "f"}]}, "empty segment"),
    ({"rules": [{"id": "x", "category": "other", "match": "a", "title": "t", "fix": "f"}] * 2}, "duplicate"),
    ({"nothing": []}, "`rules` list"),
])
def test_catalog_errors(document: dict[str, Any], message: str) -> None:
    with pytest.raises(RuleCatalogError, match=message):
        parse_catalog(document)


def test_shipped_catalog_conditions_are_known() -> None:
    from driftcheck.analysis.explain import CONDITIONS

    used = {name for rule in default_catalog().rules for name, _ in rule.when}
    assert used <= set(CONDITIONS)


@pytest.mark.parametrize("before, after, order", [("0.6.4", "0.6.10", 1), ("2.7.0+cu128", "2.7.0", 0),
                                                   ("main-a491d6f", "main-b1c1fe3", 0),
                                                   ("9.1.0", "8.6.1", -1), ("1.0rc1", "1.0", 1), (None, "1", 0)])
def test_version_order(before: Any, after: Any, order: int) -> None:
    assert version_order(before, after) == order


def test_unchanged_lists_watched_packages_with_binaries() -> None:
    a = read_snapshot_file(PAIRS / "nccl-env-added" / "a.json")
    b = read_snapshot_file(PAIRS / "nccl-env-added" / "b.json")
    titles = [row["title"] for row in explain(diff_snapshots(a, b)).unchanged]
    assert "torch 2.13.0+cpu: same version, same binary (1 compiled file(s) identical)" in titles
    rebuilt = explain(diff_snapshots(read_snapshot_file(PAIRS / "kernel-rebuilt-same-version" / "a.json"),
                                     read_snapshot_file(PAIRS / "kernel-rebuilt-same-version" / "b.json")))
    assert not any(row["title"].startswith("torch 2.13.0+cpu") for row in rebuilt.unchanged)
    assert json.dumps(rebuilt.explanations[0].to_json())


def test_an_absent_variable_reads_unset() -> None:
    a = read_snapshot_file(PAIRS / "env-thread-count" / "a.json")
    b = read_snapshot_file(PAIRS / "env-thread-count" / "b.json")
    assert [e.title for e in explain(diff_snapshots(a, b)).explanations] == ["OMP_NUM_THREADS unset -> 1"]
    assert [e.title for e in explain(diff_snapshots(b, a)).explanations] == ["OMP_NUM_THREADS 1 -> unset"]
