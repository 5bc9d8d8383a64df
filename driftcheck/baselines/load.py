"""How much of the machine other work used while a benchmark ran.

A benchmark on a shared machine measures the other work too: on a 2-core box whose neighbours start
a test suite, the speed between two runs can move by a factor of two. The CPU time the whole system
spent busy, minus what this process (and its finished children) used, is the other work's share,
recorded beside the results so that a shift during a busy run is not taken for a change of the machine.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import psutil

from driftcheck.baselines.record import MachineLoad

BUSY_THRESHOLD_CORES = 0.25


def _system_busy_s() -> float:
    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def _own_cpu_s() -> float:
    own = os.times()
    return own.user + own.system + own.children_user + own.children_system


@dataclass
class OtherLoad:
    """Started at construction; `cores()` is the average number of CPUs other work kept busy since."""

    started: float = 0.0
    system_busy_s: float = 0.0
    own_s: float = 0.0

    def __post_init__(self) -> None:
        self.started = time.monotonic()
        self.system_busy_s = _system_busy_s()
        self.own_s = _own_cpu_s()

    def cores(self) -> float:
        wall = time.monotonic() - self.started
        if wall <= 0:
            return 0.0
        others = (_system_busy_s() - self.system_busy_s) - (_own_cpu_s() - self.own_s)
        return max(0.0, others / wall)


def load_report(meter: OtherLoad) -> MachineLoad:
    """{cpus, other_cpu_cores, load_1m} for a run measured by `meter`."""
    return {"cpus": psutil.cpu_count(), "other_cpu_cores": round(meter.cores(), 3),
            "load_1m": round(os.getloadavg()[0], 2)}


def load_warning(report: MachineLoad) -> str | None:
    """A one-line warning when other work kept more than a quarter of a CPU busy during the run."""
    cores = float(report.get("other_cpu_cores") or 0.0)
    if cores <= BUSY_THRESHOLD_CORES:
        return None
    return (f"other processes kept {cores:.2f} of {report.get('cpus')} CPUs busy during the benchmarks; "
            "results include their interference")
