"""All-reduce: the bus-bandwidth formula, and the one-process-per-rank orchestration run for real with
the gloo backend on CPU processes (NCCL needs GPUs; the code path differs only in backend and timer)."""

from __future__ import annotations

import pytest
import torch

from driftcheck.baselines.calibrate import CalibrationPolicy
from driftcheck.baselines.distributed import allreduce_measurements, bus_bandwidth_gbps
from driftcheck.baselines.workloads import allreduce_cases


def test_bus_bandwidth_follows_nccl_tests() -> None:
    # 1 GB in 10 ms: algbw 100 GB/s; 8 ranks → ×2·7/8
    assert bus_bandwidth_gbps(10**9, 0.01, 8) == pytest.approx(175.0)
    assert bus_bandwidth_gbps(10**9, 0.01, 1) == 0.0
    with pytest.raises(ValueError):
        bus_bandwidth_gbps(10**9, 0.0, 2)


@pytest.mark.slow  # starts real worker processes
def test_gloo_allreduce_over_two_processes() -> None:
    sizes = [1 << 16, 1 << 20]
    measured = allreduce_measurements(torch, sizes, 2, "gloo", CalibrationPolicy(budget_s=0.3, min_samples=3))
    assert sorted(measured) == sizes
    for measurement in measured.values():
        assert len(measurement.samples_s) >= 3
        assert all(s > 0 for s in measurement.samples_s)


@pytest.mark.slow  # starts real worker processes
def test_allreduce_cases_share_one_set_of_processes() -> None:
    cases = allreduce_cases(torch, 2, [1 << 20, 2 << 20], "gloo")
    assert [c.name for c in cases] == ["allreduce_1mib_2proc_busbw_gbps", "allreduce_2mib_2proc_busbw_gbps"]
    policy = CalibrationPolicy(budget_s=0.3, min_samples=3)
    first = cases[0].run(policy)
    second = cases[1].run(policy)  # measured by the same processes, no second spawn
    assert first is not second and len(second.samples_s) >= 3
    assert cases[0].value_of(first.samples_s[0]) > 0
