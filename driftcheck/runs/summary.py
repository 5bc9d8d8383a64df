"""The compact telemetry summary kept in a run record, and the conditions worth saying out loud.

Per GPU: min / median / max of every sampled figure, seconds spent in each clock event reason, and
the processes that were not the run's own. A condition is a GPU that spent time in a hardware
slowdown, at its power cap, in a software thermal slowdown, or shared with another process; `runs`
and `explain` print them ("GPU 3 spent 41% of the run in HW slowdown").
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from driftcheck.runs.shapes import (
    Condition,
    CounterGrowth,
    CpuSeriesJson,
    GpuSeriesJson,
    GpuSummary,
    QuotaThrottle,
    SeriesJson,
    Spread,
    Telemetry,
)

# Condition -> the clock event reasons that make it. HW slowdown covers the thermal and power-brake
# variants: all three mean the hardware itself pulled the clocks down.
CONDITION_REASONS = {
    "hw_slowdown": ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"),
    "power_cap": ("sw_power_cap",),
    "thermal": ("sw_thermal_slowdown",),
}
# Condition -> the slowdown counters (us since the driver loaded) whose growth over the run measures it: the
# time itself, where the reasons sampled once per interval only estimate it. `thermal` counts NVML's
# thermal policy where the driver has no SW-thermal counter.
CONDITION_COUNTERS = {
    "hw_slowdown": ("hw_thermal_slowdown", "hw_power_brake_slowdown"),
    "power_cap": ("sw_power_cap",),
    "thermal": ("sw_thermal_slowdown",),
    "board_limit": ("board_limit",),
    "reliability": ("reliability",),
}
CONDITION_TITLES = {"hw_slowdown": "HW slowdown", "power_cap": "at its power cap",
                    "board_limit": "held by a board limit", "reliability": "held by a reliability limit",
                    "thermal": "SW thermal slowdown", "shared": "shared with another process",
                    "cpu_throttled": "throttled by the container's CPU quota"}
CONDITION_CATEGORIES = {"hw_slowdown": "thermal", "power_cap": "gpu_clock_power", "thermal": "thermal",
                        "board_limit": "gpu_clock_power", "reliability": "gpu_clock_power",
                        "shared": "gpu_contention", "cpu_throttled": "container_limits"}
# The key of the CPU side's condition in place of a GPU's.
CPU_KEY = "cpu"


def spread(values: Sequence[object]) -> Spread | None:
    """{"min", "median", "max"} of the numbers in `values` (None entries skipped); None when there are none."""
    numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not numbers:
        return None
    return {"min": round(min(numbers), 2), "median": round(median(numbers), 2), "max": round(max(numbers), 2)}


def gpu_label(key: str, series: GpuSummary) -> str:
    """How a GPU is named to a person: "GPU 3" by index, else its key."""
    return f"GPU {series['index']}" if series.get("index") is not None else key


def counter_growth(series: GpuSeriesJson) -> CounterGrowth | None:
    """How much each slowdown counter grew between the first and the last reading that carried it:
    {span_s, seconds{counter: s}}; None without two such readings (a driver that counts nothing)."""
    times = series.get("t") or []
    counted = [(t, c) for t, c in zip(times, series.get("counters_us") or [], strict=False) if isinstance(c, dict)]
    if len(counted) < 2 or counted[-1][0] <= counted[0][0]:
        return None
    (t0, first), (t1, last) = counted[0], counted[-1]
    seconds = {name: round(max(0, int(last[name]) - int(first[name])) / 1e6, 3) for name in sorted(last)
               if isinstance(last.get(name), int) and isinstance(first.get(name), int)}
    return {"span_s": round(t1 - t0, 3), "seconds": seconds} if seconds else None


def _gpu_summary(series: GpuSeriesJson, interval_s: float) -> GpuSummary:
    samples = len(series.get("t") or [])
    reason_s: dict[str, float] = {}
    for reasons in series.get("reasons") or []:
        for reason in reasons or []:
            reason_s[reason] = reason_s.get(reason, 0.0) + interval_s
    foreign = sorted({pid for pids in series.get("foreign_pids") or [] for pid in pids or []})
    shared_samples = sum(1 for pids in series.get("foreign_pids") or [] if pids)
    unresolved = sorted({pid for pids in series.get("unresolved_pids") or [] for pid in pids or []})
    names = series.get("foreign_names") or {}
    return {"index": series.get("index"), "name": series.get("name"), "samples": samples,
            "seconds": round(samples * interval_s, 1),
            "sm_mhz": spread(series.get("sm_mhz") or []), "mem_mhz": spread(series.get("mem_mhz") or []),
            "power_w": spread(series.get("power_w") or []),
            "power_limit_w": spread(series.get("power_limit_w") or []), "temp_c": spread(series.get("temp_c") or []),
            "util_pct": spread(series.get("util_pct") or []), "mem_util_pct": spread(series.get("mem_util_pct") or []),
            "memory_used_mib": spread(series.get("memory_used_mib") or []),
            "reason_s": {reason: round(seconds, 1) for reason, seconds in sorted(reason_s.items())},
            "counter_s": counter_growth(series), "foreign_pids": foreign,
            "foreign_processes": {str(pid): names.get(str(pid)) for pid in foreign},
            "shared_s": round(shared_samples * interval_s, 1), "unresolved_pids": unresolved}


def _measured(gpu: GpuSummary) -> dict[str, tuple[float, float]]:
    """kind -> (seconds, fraction of the run) from the slowdown counters, for the kinds the driver counts."""
    growth = gpu.get("counter_s")
    if not growth or not growth.get("span_s"):
        return {}
    out = {}
    for kind, names in CONDITION_COUNTERS.items():
        counted = [growth["seconds"][name] for name in names if name in growth["seconds"]]
        if counted:
            seconds = sum(counted)
            out[kind] = (seconds, min(1.0, seconds / growth["span_s"]))
    return out


def conditions(summary_gpus: dict[str, GpuSummary]) -> list[Condition]:
    """The conditions of every GPU: kind, seconds, share of the run, in GPU then kind order. A kind the
    driver counts is measured by its counters (`measured: counters`); the others are estimated from the
    reasons sampled once per interval."""
    out: list[Condition] = []
    for key, gpu in summary_gpus.items():
        seconds_total = gpu.get("seconds") or 0.0
        if not seconds_total:
            continue
        found = {kind: (s, min(1.0, s / seconds_total))
                 for kind, reasons in CONDITION_REASONS.items()
                 if (s := sum((gpu.get("reason_s") or {}).get(r, 0.0) for r in reasons))}
        measured = _measured(gpu)
        found.update(measured)
        if gpu.get("shared_s"):
            found["shared"] = (gpu["shared_s"], min(1.0, gpu["shared_s"] / seconds_total))
        for kind, (seconds, fraction) in found.items():
            if seconds > 0:
                condition: Condition = {"gpu": key, "label": gpu_label(key, gpu), "kind": kind,
                                        "seconds": round(seconds, 1), "fraction": round(fraction, 3)}
                if kind in measured:
                    condition["measured"] = "counters"
                if kind == "shared":
                    condition["processes"] = gpu["foreign_processes"]
                out.append(condition)
    return out


def quota_throttle(cpu: CpuSeriesJson) -> QuotaThrottle | None:
    """How much of the run the cgroup's CPU quota stopped it: the growth of its counters from the first
    reading to the last, {periods, throttled, fraction, throttled_s}; None without two readings of them."""
    def growth(readings: Sequence[int | None] | None) -> int | None:
        values = [v for v in readings or [] if isinstance(v, int)]
        return values[-1] - values[0] if len(values) >= 2 else None
    periods, throttled = growth(cpu.get("nr_periods")), growth(cpu.get("nr_throttled"))
    usec = growth(cpu.get("throttled_usec"))
    if periods is None or throttled is None:
        return None
    return {"periods": periods, "throttled": throttled,
            "fraction": round(min(1.0, throttled / periods), 3) if periods > 0 else 0.0,
            "throttled_s": round((usec or 0) / 1e6, 1)}


def _cpu_conditions(throttle: QuotaThrottle | None) -> list[Condition]:
    """The quota's throttling as a condition of the run (a quota that never throttled is none)."""
    if not throttle or not throttle["throttled"]:
        return []
    return [{"gpu": CPU_KEY, "label": "the container's CPU quota", "kind": "cpu_throttled",
             "seconds": throttle["throttled_s"], "fraction": throttle["fraction"]}]


def summarize(series: SeriesJson) -> Telemetry:
    """The record's telemetry summary from the raw series (`Series.to_json()`)."""
    interval_s = float(series.get("interval_s") or 1.0)
    gpus = {key: _gpu_summary(gpu, interval_s) for key, gpu in (series.get("gpus") or {}).items()}
    cpu = series.get("cpu") or {}
    return {
        "interval_s": interval_s,
        "gpu_source": series.get("gpu_source"),
        "gpu_note": series.get("gpu_note"),
        "gpus": gpus,
        "cpu": {"samples": len(cpu.get("t") or []), "freq_mhz": spread(cpu.get("freq_mhz") or []),
                "steal_pct": spread(cpu.get("steal_pct") or []), "load1": spread(cpu.get("load1") or []),
                "quota_throttled": quota_throttle(cpu)},
        "conditions": conditions(gpus) + _cpu_conditions(quota_throttle(cpu)),
    }


def share_text(kind: str, label: str, fraction: float, run_name: str) -> str:
    """"GPU 3 spent 41% of run 15 in HW slowdown", "GPU 1 was shared with another process for 20% of run 15"."""
    share = f"{fraction * 100:.0f}% of {run_name}"
    if kind == "cpu_throttled":
        return f"the container's CPU quota throttled {fraction * 100:.0f}% of the periods of {run_name}"
    if kind == "shared":
        return f"{label} was {CONDITION_TITLES[kind]} for {share}"
    if kind == "power_cap":
        return f"{label} spent {share} {CONDITION_TITLES[kind]}"
    return f"{label} spent {share} in {CONDITION_TITLES.get(kind, kind)}"


def condition_text(condition: Condition, run_name: str = "the run") -> str:
    """One condition as a sentence: "GPU 3 spent 41% of run 15 in HW slowdown (12 s)"."""
    text = share_text(condition["kind"], condition["label"], condition["fraction"], run_name)
    if condition["kind"] == "shared":
        processes = ", ".join(f"{pid} {name}" if name else pid
                              for pid, name in (condition.get("processes") or {}).items())
        return text + (f" (pid {processes})" if processes else "")
    counted = ", counted by the driver" if condition.get("measured") == "counters" else ""
    return f"{text} ({condition['seconds']:g} s{counted})"
