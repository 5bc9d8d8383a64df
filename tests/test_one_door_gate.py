"""One door for the gate and the benchmarks: for `check`, `baseline list|show` and `bench` with `--format json`,
the command prints exactly the library result's `.to_json()` for the same inputs.

The check compares a recorded machine (a replay) with a baseline of it, so both sides are the same facts; the
clock a snapshot reads (its time and each probe's duration) is held still, so the command's fresh snapshot and
the library's are the same document. The benchmark's runs are one recorded run, so the test measures nothing:
what it shows is that the command adds nothing to, and drops nothing from, what the library returns."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import driftcheck
from driftcheck.baselines import repeated
from driftcheck.probes import runner
from driftcheck.snapshot import model
from tests.conftest import CliResult

REPLAY = f"replay:{Path(__file__).resolve().parent / 'data' / 'hosts' / 'debian12-vm-docker-omp-threads'}"
BASELINE_OF = f"replay:{Path(__file__).resolve().parent / 'data' / 'hosts' / 'debian12-vm-docker'}"


@pytest.fixture
def still_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every snapshot taken now has the same time, and every probe took no time."""
    monkeypatch.setattr(model, "utc_now", lambda: "2026-12-05T09:00:00.000000Z")
    monkeypatch.setattr(runner, "time", SimpleNamespace(monotonic=lambda: 0.0))


def test_check_json_is_the_library_result(cli: Callable[..., CliResult], still_clock: None) -> None:
    baseline = driftcheck.take_snapshot(driftcheck.SnapshotRequest(target=BASELINE_OF, label="golden"))
    assert cli("baseline", "save", "default", baseline.id).returncode == 0
    printed = cli("check", "--host", REPLAY, "--format", "json", "--no-store")
    result = driftcheck.check(target=REPLAY, keep=False)
    assert printed.returncode == (1 if result.drift else 0), printed.stderr
    assert result.drift and result.relevant  # a real difference travels through both doors
    assert json.loads(printed.stdout) == json.loads(json.dumps(result.to_json()))


def test_baseline_list_and_show_json_are_the_library_results(cli: Callable[..., CliResult],
                                                            still_clock: None) -> None:
    taken = driftcheck.take_snapshot(driftcheck.SnapshotRequest(target=BASELINE_OF, probes=["system", "env"]))
    assert cli("baseline", "list", "--format", "json").stdout.strip() == json.dumps([], indent=2)
    saved = driftcheck.save_baseline("golden", taken.id)
    assert saved.entry.snapshot_id == taken.id and saved.bench is None
    listed = cli("baseline", "list", "--format", "json")
    assert json.loads(listed.stdout) == driftcheck.list_baselines().to_json()
    assert [entry["name"] for entry in json.loads(listed.stdout)] == ["golden"]
    shown = cli("baseline", "show", "golden", "--format", "json")
    assert json.loads(shown.stdout) == driftcheck.show_baseline("golden").to_json()
    assert json.loads(shown.stdout)["snapshot"] == taken.document
    driftcheck.remove_baseline("golden")
    assert driftcheck.list_baselines().to_json() == []


def _recorded_run() -> dict[str, Any]:
    """One run of the quick CPU suite as a child returns it (two of its benchmarks, figures as recorded)."""
    def entry(unit: str, median: float, higher: bool) -> dict[str, Any]:
        return {"unit": unit, "higher_is_better": higher, "n": 12, "median": median, "ci_low": median * 0.99,
                "ci_high": median * 1.01, "cv": 0.01, "samples": [median] * 12, "threads": 2, "control": None}

    return {"suite": "quick", "device": "cpu", "device_name": "cpu", "threads": 2, "budget_s": 0.5,
            "elapsed_s": 0.5, "skipped": [], "warnings": [], "machine_load": None,
            "disturbance": {"disturbed": None, "taken": 0.0},
            "results": {"launch_eager_us_per_op": entry("us", 4.2, False),
                        "gemm_fp32_1024_gflops": entry("GFLOP/s", 61.0, True)}}


def test_bench_json_is_the_library_result(cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> None:
    run = _recorded_run()
    monkeypatch.setattr(repeated, "suite_run", lambda *args, **kwargs: lambda: copy.deepcopy(run))
    monkeypatch.setattr(repeated, "time", SimpleNamespace(monotonic=lambda: 0.0))
    printed = cli("bench", "--device", "cpu", "--budget-s", "0.5", "--runs", "2", "--format", "json")
    assert printed.returncode == 0, printed.stderr
    result = driftcheck.bench(device="cpu", budget_s=0.5, runs=2)
    assert json.loads(printed.stdout) == json.loads(json.dumps(result.to_json(), default=str))
    assert result.to_json()["runs"] == 2 and set(result.to_json()["results"]) == set(run["results"])
