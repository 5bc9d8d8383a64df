"""`check --against` an unchanged machine with a busy process on one core: the fresh runs record the control
next to every benchmark, and no benchmark is called slower because of the load — where the control moved
with the load the verdict says so ("the whole machine is slower now: control ...").

No timing is asserted (the 2-core CI machine is shared): each verdict is checked against the figures it
states (raw, normalised and control change, MDS), as tests/baselines/test_bench_check.py does.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

pytestmark = pytest.mark.slow

# Two runs of a small budget: each run is a fresh interpreter (torch imported), most of its cost.
BUDGET_S = "3"
RUN_TIMEOUT_S = 600


@pytest.fixture
def policy(tmp_path: Path) -> str:
    """The NUMA node's memory total moves on a ballooned VM, and pytest's own variable differs between
    the save and the check: neither is the benchmarks' drift."""
    path = tmp_path / "policy.yaml"
    path.write_text("ignore:\n  - probes.system.data.numa.nodes.*.memory_total_kib\n"
                    "  - probes.env.data.vars.PYTEST_CURRENT_TEST\n", "utf-8")
    return str(path)


def _pin_to_first_cpu() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[0]})


def _consistent(row: dict) -> None:
    """The verdict follows from the figures the row states."""
    text = row["verdict_text"]
    control = row["control"]
    assert control["recorded"] is True, text
    for key in ("raw_change_pct", "normalised_change_pct", "control_change_pct", "change_pct", "mds_pct"):
        assert isinstance(row[key], (int, float)) and math.isfinite(row[key]), (key, text)
    # The figure the verdict was made on: the normalised one where the control moved beyond its noise, else the
    # user's own (raw) one; the other is shown beside it.
    assert control["decided_by"] == ("normalised" if control["moved"] else "raw"), text
    assert row["change_pct"] == row[f"{control['decided_by']}_change_pct"], text
    shown = "raw" if control["moved"] else "normalised"
    assert f"{shown} {row[f'{shown}_change_pct']:+.1f}%" in text, text
    assert f"control {row['control_change_pct']:+.1f}%" in text, text
    if row["verdict"] in ("slower", "faster"):
        # Called only beyond the MDS of the figure it was made on.
        assert abs(math.log1p(row["change_pct"] / 100.0)) >= math.log1p(row["mds_pct"] / 100.0) - 1e-3, text
    if control["moved"]:
        assert "the whole machine" in text, text


def test_a_busy_core_is_the_machines_shift_not_the_benchmarks(cli_process: Callable[..., CliResult],
                                                             policy: str) -> None:
    # The baseline is taken without the busy loop ...
    saved = cli_process("baseline", "save", "b1", "--bench", "quick", "--runs", "2", "--budget-s", BUDGET_S,
                        timeout=RUN_TIMEOUT_S)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    bench = json.loads(cli_process("baseline", "show", "b1", "--format", "json").stdout)["snapshot"]["probes"]
    stored = bench["bench"]["data"]
    assert stored["control"]["figures"] == {"int_1t": "Mops/s", "copy_1t": "GB/s", "all_cores": "MB/s per thread"}
    for name, result in stored["results"].items():
        for run in result["runs"]:
            assert run["control"]["int_1t"] > 0 and run["control"]["all_cores"] > 0, name
            assert run["threads"] >= 1 and run["control"]["batch_s"] > 0, name
    assert all(run["threads"] == 1 for run in stored["results"]["launch_eager_us_per_op"]["runs"])

    # ... and the check under a real busy loop pinned to one core.
    competitor = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=_pin_to_first_cpu)
    try:
        checked = cli_process("check", "--against", "b1", "--policy", policy, "--format", "json",
                              timeout=RUN_TIMEOUT_S)
    finally:
        competitor.kill()
        competitor.wait()
    report = json.loads(checked.stdout)
    rows = {row["name"]: row for row in report["bench"]}
    assert {"gemm_fp32_1024_gflops", "decode_eager_tok_per_s", "launch_eager_us_per_op"} <= set(rows)
    fresh = json.loads(cli_process("show", "@latest", "--format", "json").stdout)  # the check's own snapshot
    loads = [float((r.get("disturbance") or {}).get("other_cpu_cores") or 0.0)
             for r in fresh["probes"]["bench"]["data"]["run_reports"]]
    assert max(loads) >= 0.5, loads  # the busy loop was seen by the CPU accounting
    for row in rows.values():
        _consistent(row)
        b_loaded = bool(re.search(r"\bB \d+/\d+ runs disturbed", row["disturbance"] or ""))
        if row["verdict"] == "slower":
            # A loss is never called on a check whose runs saw the busy loop: the control cannot vouch
            # for how much of it a benchmark felt, and the disturbance could explain it.
            assert not b_loaded, row["verdict_text"]
        if row["control"]["moved"] and row["control_change_pct"] < 0 and b_loaded:
            assert row["verdict"] in ("inconclusive", "faster"), row["verdict_text"]
            assert row["verdict"] == "faster" or "the whole machine is slower now" in row["reason"], row["verdict_text"]
    assert report["drift"] is (checked.returncode == 1)
    assert sorted(report["bench_shifts"]) == sorted(n for n, r in rows.items() if r["verdict"] in ("slower", "faster"))
    # The text report shows the raw and normalised figures side by side.
    text = cli_process("explain", "baseline:b1", "@latest").stdout
    assert "launch_eager_us_per_op: " in text and "normalised" in text and "control " in text, text
