"""One reading of the CPU side through a Host: mean core frequency, steal time since the last reading, load,
and the CPU quota's throttle counters of the cgroup driftcheck runs in.

Frequency comes from cpufreq's `scaling_cur_freq` where the kernel exposes it, else from the `cpu MHz`
lines of /proc/cpuinfo (what a VM without cpufreq shows); steal from the `cpu` line of /proc/stat
(time the hypervisor gave our virtual CPUs to someone else); load from /proc/loadavg; the throttle
counters (`nr_periods`, `nr_throttled`, `throttled_usec`) from the `cpu.stat` of the nearest cgroup level
with a quota (v1 or v2), whose growth over a run is the share of the run the quota stopped it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from driftcheck.hosts.base import Host
from driftcheck.probes.sysread import RawView
from driftcheck.probes.system import CGROUP_ROOT, cpu_cgroup_dirs, throttling

_CPU_DIR = re.compile(r"^cpu\d+$")


def _stat_counters(text: str) -> tuple[int, int] | None:
    """(steal, total) jiffies from the aggregate `cpu` line of /proc/stat."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            values = [int(v) for v in line.split()[1:]]
            # guest and guest_nice are already counted inside user and nice
            total = sum(values[:8])
            return (values[7] if len(values) > 7 else 0), total
    return None


def _mean(values: list[float]) -> float:
    """statistics.fmean, as it computes it (fsum over the count): importing statistics (fractions, decimal, random,
    ~5 ms) held the start of a run's command back, for one mean."""
    return math.fsum(values) / len(values)


def _cpuinfo_mhz(text: str) -> float | None:
    values = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.MULTILINE)]
    return round(_mean(values), 1) if values else None


@dataclass
class CpuReader:
    """Reads the CPU side of `host` once per call; keeps the last /proc/stat counters for the steal delta."""

    host: Host
    _last: tuple[int, int] | None = None
    _freq_files: list[str] | None = field(default=None)
    _cgroup_dirs: list[str] | None = field(default=None)

    def _frequency_files(self) -> list[str]:
        if self._freq_files is None:
            try:
                cpus = [name for name in self.host.list_dir("/sys/devices/system/cpu") if _CPU_DIR.match(name)]
            except OSError:
                cpus = []
            files = [f"/sys/devices/system/cpu/{cpu}/cpufreq/scaling_cur_freq" for cpu in cpus]
            # One probe read decides for all: cpufreq is there for every core or for none.
            self._freq_files = files if files and self._readable(files[0]) else []
        return self._freq_files

    def _readable(self, path: str) -> bool:
        try:
            self.host.read_bytes(path)
            return True
        except OSError:
            return False

    def frequency_mhz(self) -> float | None:
        """The mean current frequency of the cores, in MHz; None where neither source is readable."""
        readings = []
        for path in self._frequency_files():
            try:
                readings.append(int(self.host.read_text(path).strip()) / 1000.0)
            except (OSError, ValueError):
                continue
        if readings:
            return round(_mean(readings), 1)
        try:
            return _cpuinfo_mhz(self.host.read_text("/proc/cpuinfo"))
        except OSError:
            return None

    def steal_pct(self) -> float | None:
        """The share of CPU time stolen by the hypervisor since the previous call (None on the first)."""
        try:
            counters = _stat_counters(self.host.read_text("/proc/stat"))
        except OSError:
            return None
        last, self._last = self._last, counters
        if counters is None or last is None or counters[1] <= last[1]:
            return None
        return round(100.0 * (counters[0] - last[0]) / (counters[1] - last[1]), 2)

    def load1(self) -> float | None:
        """The one-minute load average."""
        try:
            return float(self.host.read_text("/proc/loadavg").split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _cpu_cgroup_dirs(self) -> list[str]:
        if self._cgroup_dirs is None:
            try:
                self._cgroup_dirs = cpu_cgroup_dirs(self.host.list_dir(CGROUP_ROOT),
                                                    self.host.read_text("/proc/self/cgroup"))
            except OSError:
                self._cgroup_dirs = []
        return self._cgroup_dirs

    def throttle(self) -> dict[str, Any]:
        """The quota's counters now: {"nr_periods", "nr_throttled", "throttled_usec"}, each None when unread."""
        files: dict[str, str | None] = {}
        denied: list[str] = []
        for directory in self._cpu_cgroup_dirs():
            path = f"{directory}/cpu.stat"
            try:
                files[path] = self.host.read_text(path)
            except PermissionError:
                files[path] = None
                denied.append(path)
            except OSError:
                files[path] = None
        found = throttling(RawView({"files": files, "denied": denied}), self._cpu_cgroup_dirs())
        counters = found if isinstance(found, dict) else {}
        return {name: counters.get(name) for name in ("nr_periods", "nr_throttled", "throttled_usec")}

    def read(self) -> dict[str, Any]:
        """One reading: {"freq_mhz", "steal_pct", "load1", "nr_periods", "nr_throttled", "throttled_usec"}."""
        return {"freq_mhz": self.frequency_mhz(), "steal_pct": self.steal_pct(), "load1": self.load1(),
                **self.throttle()}
