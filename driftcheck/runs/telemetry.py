"""Watching the machine while a command runs: every GPU and the CPU side, once per interval, in threads.

GPUs are read through NVML in-process when it initialises (a local host with a driver); otherwise
through `nvidia-smi --query-gpu=... --format=csv -lms N` started through the Host, whose rows arrive
as it prints them (a replayed recording gives them all at once). Without either, the GPU series stays
empty and the reason is kept; on this machine without an NVIDIA driver neither is tried, and the reason
is the driver check's (`driftcheck.nvidia.driver`). The CPU side is read through the Host the same way on every machine.

Each GPU reading notes the processes on that GPU that are not the run's own (the command and its
descendants, driftcheck, and the server the benchmark talks to when `--pid`/`--process` name it):
another process on a GPU is a shared run. Where NVML reports process
ids of another pid namespace (a container), those ids are not visible here and are kept apart as
unresolved rather than called foreign.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from driftcheck.errors import CommandTimeout
from driftcheck.hosts.base import Host, LineStream
from driftcheck.nvidia.driver import missing_driver
from driftcheck.runs.cpu_samples import CpuReader
from driftcheck.runs.gpu_samples import (
    FIELDS,
    SMI_APPS_ARGV,
    SMI_QUERIES,
    nvml_reading,
    read_nvml_handles,
    smi_apps,
    smi_header,
    smi_row,
    smi_stream_argv,
)
from driftcheck.runs.shapes import GpuSeriesJson, SeriesJson

OwnPids = Callable[[], set[int]]
# The CPU side's columns; the cgroup counters grow through the run (runs.summary: the throttled share).
CPU_FIELDS = ("freq_mhz", "steal_pct", "load1", "nr_periods", "nr_throttled", "throttled_usec")


def process_tree(*roots: int | None, patterns: Sequence[str] = ()) -> set[int]:
    """The pids a run counts as its own: this process, each root and its descendants, and every process
    whose command line matches one of `patterns` (the server a benchmark talks to) with its descendants."""
    # psutil (~20 ms to import) is imported where it is used: a run on a machine without a GPU, and without
    # --server/--pid/--process, never asks it anything (see `runs.session.watch_modules`).
    import psutil

    own = {psutil.Process().pid}
    tops = [pid for pid in roots if pid is not None]
    if patterns:
        compiled = [re.compile(p) for p in patterns]
        for process in psutil.process_iter(["pid", "cmdline"]):
            line = " ".join(process.info.get("cmdline") or [])
            if line and any(c.search(line) for c in compiled):
                tops.append(process.info["pid"])
    for pid in tops:
        own.add(pid)
        with contextlib.suppress(psutil.Error):
            own.update(child.pid for child in psutil.Process(pid).children(recursive=True))
    return own


def listener_pids(url: str) -> set[int]:
    """The processes listening on the port of `url` on this machine: the server a benchmark talks to.

    Empty for a remote host, or where the listener belongs to a user whose sockets we may not see.
    """
    parsed = urlparse(url)
    if parsed.hostname not in ("localhost", "127.0.0.1", "::1", "0.0.0.0", socket.gethostname()):
        return set()
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    import psutil

    try:
        connections = psutil.net_connections(kind="inet")
    except (psutil.Error, OSError):
        return set()
    return {c.pid for c in connections if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
            and c.pid is not None}


def _process_name(pid: int) -> str | None:
    import psutil

    try:
        return str(psutil.Process(pid).name())
    except psutil.Error:
        return None


@dataclass
class _GpuSeries:
    index: int | None = None
    name: str | None = None
    t: list[float] = field(default_factory=list)
    values: dict[str, list[Any]] = field(default_factory=lambda: {f: [] for f in FIELDS})
    reasons: list[list[str] | None] = field(default_factory=list)
    counters_us: list[dict[str, int] | None] = field(default_factory=list)
    foreign_pids: list[list[int] | None] = field(default_factory=list)
    unresolved_pids: list[list[int] | None] = field(default_factory=list)
    names: dict[str, str | None] = field(default_factory=dict)

    def add(self, t: float, reading: dict[str, Any], own: set[int]) -> None:
        """Append one reading taken `t` seconds into the run; pids outside `own` are another's."""
        self.index = reading.get("index") if reading.get("index") is not None else self.index
        self.name = reading.get("name") or self.name
        self.t.append(round(t, 3))
        for name in FIELDS:
            self.values[name].append(reading.get(name))
        self.reasons.append(reading.get("reasons"))
        self.counters_us.append(reading.get("counters_us"))
        pids = reading.get("pids")
        if pids is None:
            self.foreign_pids.append(None)
            self.unresolved_pids.append(None)
            return
        import psutil

        others = [pid for pid in pids if pid not in own]
        foreign = [pid for pid in others if psutil.pid_exists(pid)]
        self.foreign_pids.append(foreign)
        self.unresolved_pids.append([pid for pid in others if not psutil.pid_exists(pid)])
        for pid in foreign:
            if str(pid) not in self.names:  # named when first seen: it may be gone by the end of the run
                self.names[str(pid)] = _process_name(pid)

    def to_json(self) -> GpuSeriesJson:
        """The GPU's columns, one entry per sample."""
        values = self.values
        return {"index": self.index, "name": self.name, "t": self.t, "sm_mhz": values["sm_mhz"],
                "mem_mhz": values["mem_mhz"], "power_w": values["power_w"], "power_limit_w": values["power_limit_w"],
                "temp_c": values["temp_c"], "util_pct": values["util_pct"], "mem_util_pct": values["mem_util_pct"],
                "memory_used_mib": values["memory_used_mib"], "reasons": self.reasons,
                "counters_us": self.counters_us, "foreign_pids": self.foreign_pids,
                "unresolved_pids": self.unresolved_pids, "foreign_names": self.names}


@dataclass
class Series:
    """Everything sampled during one run, column by column (the raw series kept beside the summary)."""

    interval_s: float
    gpu_source: str | None = None
    gpu_note: str | None = None
    gpus: dict[str, _GpuSeries] = field(default_factory=dict)
    cpu: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in ("t", *CPU_FIELDS)})

    def add_gpus(self, t: float, readings: dict[str, dict[str, Any]], own: set[int]) -> None:
        """Append one reading of every GPU."""
        for key, reading in readings.items():
            self.gpus.setdefault(key, _GpuSeries()).add(t, reading, own)

    def add_cpu(self, t: float, reading: dict[str, Any]) -> None:
        """Append one reading of the CPU side."""
        self.cpu["t"].append(round(t, 3))
        for name in CPU_FIELDS:
            self.cpu.setdefault(name, []).append(reading.get(name))

    def to_json(self) -> SeriesJson:
        """The raw series as stored beside a run record (`telemetry_series`)."""
        cpu = self.cpu
        return {"interval_s": self.interval_s, "gpu_source": self.gpu_source, "gpu_note": self.gpu_note,
                "gpus": {key: series.to_json() for key, series in self.gpus.items()},
                "cpu": {"t": cpu["t"], "freq_mhz": cpu["freq_mhz"], "steal_pct": cpu["steal_pct"],
                        "load1": cpu["load1"], "nr_periods": cpu["nr_periods"], "nr_throttled": cpu["nr_throttled"],
                        "throttled_usec": cpu["throttled_usec"]}}


class TelemetrySampler:
    """Samples `host` every `interval_s` from `start()` to `stop()`; `nvml` injects an NVML module (tests)."""

    def __init__(self, host: Host, interval_s: float = 1.0, nvml: Any | None = None,
                 own_pids: OwnPids | None = None) -> None:
        self.host = host
        self.interval_s = interval_s
        self._nvml = nvml
        self._own_pids = own_pids or (lambda: process_tree(None))
        self.series = Series(interval_s)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stream: LineStream | None = None
        self._threads: list[threading.Thread] = []
        self._started = 0.0
        self._apps: dict[str, list[int]] | None = None

    # --- life cycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin sampling in background threads."""
        self._started = time.monotonic()
        for target, name in ((self._gpu_loop, "telemetry-gpu"), (self._cpu_loop, "telemetry-cpu")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, wait_s: float = 5.0) -> Series:
        """Stop sampling and return what was gathered; a source stuck in a call is left behind, not waited for."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()
        deadline = time.monotonic() + wait_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            return self.series

    def _elapsed(self) -> float:
        return time.monotonic() - self._started

    def _ticks(self) -> Any:
        """Yield once now and then once per interval until stopped."""
        while not self._stop.is_set():
            yield
            self._stop.wait(self.interval_s)

    # --- CPU -------------------------------------------------------------------------------------------

    def _cpu_loop(self) -> None:
        reader = CpuReader(self.host)
        for _ in self._ticks():
            reading = reader.read()
            with self._lock:
                self.series.add_cpu(self._elapsed(), reading)

    # --- GPUs ------------------------------------------------------------------------------------------

    def _gpu_loop(self) -> None:
        # Where this machine has no driver, loading NVML (a search of the library path) and trying three
        # nvidia-smi queries only say so, and took 13-16 ms of every run's start and end: the driver is
        # looked at first (an injected NVML is asked regardless: it is the tests' GPU).
        absent = missing_driver(self.host) if self._nvml is None else None
        if absent is not None:
            self._note(None, absent)
            return
        nv, why_not = self._open_nvml()
        if nv is not None:
            self._note("nvml", None)
            try:
                self._sample_nvml(nv)
            finally:
                self._close_nvml(nv)
            return
        self._sample_smi(why_not)

    def _note(self, source: str | None, note: str | None) -> None:
        with self._lock:
            self.series.gpu_source, self.series.gpu_note = source, note

    def _open_nvml(self) -> tuple[Any | None, str | None]:
        nv: Any = self._nvml
        if nv is None:
            if not self.host.capabilities.in_process:
                return None, f"NVML reads only this machine, not a {self.host.kind} host"
            try:
                nv = importlib.import_module("pynvml")
            except ImportError as exc:
                return None, f"pynvml not importable ({exc})"
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            return None, f"NVML did not initialise: {exc}"
        return nv, None

    @staticmethod
    def _close_nvml(nv: Any) -> None:
        with contextlib.suppress(nv.NVMLError):
            nv.nvmlShutdown()

    def _sample_nvml(self, nv: Any) -> None:
        handles = read_nvml_handles(nv)
        for _ in self._ticks():
            self.sample_nvml_once(nv, handles)

    def sample_nvml_once(self, nv: Any, handles: list[Any]) -> None:
        """Take one NVML reading of every GPU now (the loop's step; tests drive it directly)."""
        readings = nvml_reading(nv, handles)
        own = self._own_pids()
        with self._lock:
            self.series.add_gpus(self._elapsed(), readings, own)

    def _sample_smi(self, why_not_nvml: str | None) -> None:
        """Stream `-lms` rows with the first query the driver accepts: the slowdown counters (>= 570),
        then the plain query, then the throttle names of drivers before 535 (each refuses the later names)."""
        prefix = f"{why_not_nvml}; " if why_not_nvml else ""
        interval_ms = max(100, int(self.interval_s * 1000))
        started = False
        for query in SMI_QUERIES:
            if self._stop.is_set():
                return
            try:
                stream = self.host.stream(smi_stream_argv(interval_ms, query))
            except FileNotFoundError:
                continue  # no nvidia-smi, or (a recording) this query was never asked: try the next
            except (OSError, CommandTimeout) as exc:
                self._note(None, f"{prefix}nvidia-smi could not start: {exc}")
                return
            if not started:
                started = True
                self._note("nvidia-smi", why_not_nvml)
                apps = threading.Thread(target=self._apps_loop, name="telemetry-apps", daemon=True)
                apps.start()
                self._threads.append(apps)
            if self._consume_smi(stream) > 0 or self._stop.is_set():
                return
        if not started:
            self._note(None, f"{prefix}nvidia-smi not found: no NVIDIA driver, no GPU telemetry")
        elif not self._stop.is_set():
            self._note(None, f"{prefix}nvidia-smi printed no GPU rows (no GPU visible, or the driver failed)")

    def _consume_smi(self, stream: LineStream) -> int:
        """Read `-lms` rows until the stream ends; returns how many GPU rows were read."""
        with self._lock:
            self._stream = stream
        if self._stop.is_set():
            stream.close()
        header: list[str] | None = None
        tick: dict[str, dict[str, Any]] = {}
        ticks = rows = 0
        for line in stream:
            if header is None or line.lstrip().startswith(header[0]):
                header = smi_header(line) or header
                continue
            parsed = smi_row(header, line)
            if parsed is None:
                continue
            key, reading = parsed
            if key in tick:  # the same GPU again: the previous sample is complete
                self._add_smi_tick(tick, ticks)
                tick, ticks = {}, ticks + 1
            reading["pids"] = self._pids_of(key)
            tick[key] = reading
            rows += 1
        if tick:
            self._add_smi_tick(tick, ticks)
        return rows

    def _add_smi_tick(self, tick: dict[str, dict[str, Any]], number: int) -> None:
        own = self._own_pids()
        # The -lms cadence is the clock: a replayed log arrives at once, yet its rows are an interval apart.
        with self._lock:
            self.series.add_gpus(number * self.interval_s, tick, own)

    def _pids_of(self, key: str) -> list[int] | None:
        with self._lock:
            apps = self._apps
        if apps is None:
            return None
        return list(apps.get(key, []))

    def _apps_loop(self) -> None:
        """Poll the compute processes every 5 intervals: `-lms` cannot print them beside the GPU rows."""
        while not self._stop.is_set():
            try:
                result = self.host.run(list(SMI_APPS_ARGV), timeout_s=10.0)
                apps = smi_apps(result.stdout) if result.returncode == 0 else None
            except (OSError, CommandTimeout):
                apps = None
            with self._lock:
                self._apps = apps
            if apps is None:
                return
            self._stop.wait(self.interval_s * 5)
