"""What the face offers by name: the probes a snapshot can take and the benchmark suites and devices.

The command line builds its choices and help from these, so it never reaches into the probes or the benchmarks.
"""

from __future__ import annotations

# The names alone: the plans behind them load the workloads, which only a benchmark that runs needs.
from driftcheck.baselines.suites import DEVICES, SUITES
from driftcheck.snapshot.probe_names import PROBE_NAMES

BENCH_SUITES: tuple[str, ...] = SUITES
BENCH_DEVICES: tuple[str, ...] = DEVICES

__all__ = ["BENCH_DEVICES", "BENCH_SUITES", "probe_names"]


def probe_names() -> list[str]:
    """Names of every built-in probe, in report order (without importing the probes)."""
    return list(PROBE_NAMES)
