"""What else used the machine during one benchmark run, and whether that disturbed the run.

Recorded per run: the CPUs other processes kept busy (all busy time minus this process's own),
CPU steal (time a VM's virtual CPUs waited for the host: /proc/stat's `steal`, which a guest's own
process accounting never shows), other processes on the GPUs (NVML), and the throttle reasons that
took clock speed away during the run. A run is disturbed when others took at least
`DISTURBED_SHARE` of the machine, or another process used a GPU, or a GPU throttled: a verdict then
names that instead of blaming the machine's configuration.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import psutil

from driftcheck.baselines.record import BenchEntry, Disturbance
from driftcheck.nvidia.values import SLOWDOWN_REASONS

# Share of the machine (other CPU work plus steal) from which a run counts as disturbed: on a 2-core
# machine a fifth of a core; above it the run-to-run spread measured on a quiet VM is exceeded.
DISTURBED_SHARE = 0.10


def _cpu_times() -> tuple[float, float]:
    """(busy seconds of all CPUs, steal seconds), summed since boot."""
    times = psutil.cpu_times()
    steal = float(getattr(times, "steal", 0.0))
    busy = float(sum(times) - times.idle - getattr(times, "iowait", 0.0) - steal
                 - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0))
    return busy, steal


def _own_cpu_s() -> float:
    own = os.times()
    return own.user + own.system + own.children_user + own.children_system


def _nvml() -> Any | None:
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no library or no driver: no GPU processes to read
        return None
    return pynvml


def other_gpu_processes(gpus: list[int], nvml: Any | None = None) -> list[dict[str, Any]] | None:
    """Processes other than this one (and its children) on `gpus`; None when NVML cannot say."""
    nvml = nvml if nvml is not None else _nvml()
    if nvml is None:
        return None
    mine = {os.getpid(), *(child.pid for child in psutil.Process().children(recursive=True))}
    found = []
    for index in gpus:
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            running = list(nvml.nvmlDeviceGetComputeRunningProcesses(handle))
        except Exception:  # noqa: BLE001 - one GPU that cannot be read must not hide the others
            continue
        for proc in running:
            pid = int(getattr(proc, "pid", 0))
            if pid and pid not in mine:
                used = getattr(proc, "usedGpuMemory", None)
                found.append({"gpu": index, "pid": pid,
                              "memory_mib": None if not isinstance(used, int) else used // (1 << 20)})
    return found


@dataclass
class DisturbanceMeter:
    """Started at construction; `report()` says what else ran since, and whether that disturbed the run."""

    gpus: list[int] = field(default_factory=list)
    nvml: Any | None = None
    started: float = 0.0
    busy_s: float = 0.0
    steal_s: float = 0.0
    own_s: float = 0.0
    gpu_processes_before: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.started = time.monotonic()
        self.busy_s, self.steal_s = _cpu_times()
        self.own_s = _own_cpu_s()
        if self.gpus:
            self.gpu_processes_before = other_gpu_processes(self.gpus, self.nvml)

    def report(self, throttled: list[str] | None = None) -> Disturbance:
        """{cpus, other_cpu_cores, steal_pct, other_gpu_processes, throttled, taken, disturbed}.

        `throttled` lists the slowdown reasons seen after the run's benchmarks; `taken` is the share
        of the machine others took (None when a GPU disturbance cannot be put as a share); `disturbed`
        is a one-line description, or None for an undisturbed run.
        """
        wall = max(time.monotonic() - self.started, 1e-9)
        busy, steal = _cpu_times()
        cpus = psutil.cpu_count() or 1
        others = max(0.0, (busy - self.busy_s) - (_own_cpu_s() - self.own_s)) / wall
        steal_share = max(0.0, steal - self.steal_s) / wall / cpus
        gpu_others = None
        if self.gpus:
            after = other_gpu_processes(self.gpus, self.nvml)
            if after is not None or self.gpu_processes_before is not None:
                seen = {(p["gpu"], p["pid"]): p for p in (self.gpu_processes_before or []) + (after or [])}
                gpu_others = sorted(seen.values(), key=lambda p: (p["gpu"], p["pid"]))
        slowdowns = sorted(set(throttled or []) & SLOWDOWN_REASONS)
        taken = min(1.0, others / cpus + steal_share)
        reasons = []
        if taken >= DISTURBED_SHARE:
            reasons.append(f"other processes kept {others:.2f} of {cpus} CPUs busy"
                           + (f", CPU steal {steal_share * 100:.0f}%" if steal_share >= 0.01 else ""))
        if gpu_others:
            reasons.append("other processes on the GPU: " + ", ".join(f"pid {p['pid']} (GPU {p['gpu']})"
                                                                       for p in gpu_others[:4]))
        if slowdowns:
            reasons.append("GPU clocks throttled: " + ", ".join(slowdowns))
        return {"cpus": cpus, "other_cpu_cores": round(others, 3), "steal_pct": round(steal_share * 100.0, 2),
                "other_gpu_processes": gpu_others, "throttled": slowdowns,
                "taken": None if gpu_others or slowdowns else round(taken, 3),
                "disturbed": "; ".join(reasons) or None}


def throttle_reasons(results: Mapping[str, BenchEntry]) -> list[str]:
    """The clock-event reasons any benchmark of a run saw after it ran (from its `clocks_after`)."""
    seen: set[str] = set()
    for entry in results.values():
        after = entry.get("clocks_after") if isinstance(entry, dict) else None
        reasons = after.get("clock_event_reasons") if isinstance(after, dict) else None
        if isinstance(reasons, list):
            seen.update(str(r) for r in reasons)
    return sorted(seen)
