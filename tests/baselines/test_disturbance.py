"""What else ran during a benchmark run: a real competing process on this machine, and (NVML needs a
GPU) a stand-in with NVML's interface for other processes on a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from driftcheck.baselines.disturbance import DisturbanceMeter, other_gpu_processes, throttle_reasons


@pytest.mark.slow  # runs a benchmark beside a busy process
def test_a_busy_competitor_is_measured_and_flags_the_run() -> None:
    meter = DisturbanceMeter()
    spin = "import time\nend = time.time() + 4\nwhile time.time() < end: pass"
    competitor = subprocess.Popen([sys.executable, "-c", spin])
    try:
        time.sleep(2.5)
        # Read while it still runs: once reaped, a child's CPU time counts as this process's own.
        report = meter.report()
    finally:
        competitor.kill()
        competitor.wait()
    assert report["other_cpu_cores"] >= 0.5, report
    assert report["taken"] is not None and report["taken"] >= 0.1
    assert report["disturbed"] and "other processes kept" in report["disturbed"]
    assert report["steal_pct"] >= 0.0 and report["other_gpu_processes"] is None and report["throttled"] == []


class FakeNvml(SimpleNamespace):
    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - NVML's name
        return f"gpu{index}"

    def nvmlDeviceGetComputeRunningProcesses(self, handle: str) -> list[SimpleNamespace]:  # noqa: N802
        return [SimpleNamespace(pid=os.getpid(), usedGpuMemory=1 << 30),
                SimpleNamespace(pid=424242, usedGpuMemory=3 << 30)] if handle == "gpu0" else []


def test_other_gpu_processes_and_throttling_name_the_disturbance() -> None:
    nvml = FakeNvml()
    assert other_gpu_processes([0, 1], nvml) == [{"gpu": 0, "pid": 424242, "memory_mib": 3072}]
    report = DisturbanceMeter(gpus=[0], nvml=nvml).report(["idle", "sw_power_cap"])
    assert report["throttled"] == ["sw_power_cap"] and report["taken"] is None
    assert "pid 424242 (GPU 0)" in report["disturbed"] and "throttled: sw_power_cap" in report["disturbed"]
    results = {"a": {"clocks_after": {"clock_event_reasons": ["hw_slowdown"]}}, "b": {"clocks_after": {}}}
    assert throttle_reasons(results) == ["hw_slowdown"]
