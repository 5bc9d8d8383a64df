"""One reading of every GPU, from NVML or from a line of `nvidia-smi --query-gpu=... --format=csv -lms N`.

A reading is a plain dict per GPU, keyed by UUID (else PCI bus id, else "index-N", as in probe data): clocks, power and
its limit, temperature, utilisation, memory used, the active clock event (throttle) reasons, and the
process ids using the GPU where the source can say. A field the source cannot read is None.
"""

from __future__ import annotations

import contextlib
import csv
import io
from collections.abc import Sequence
from typing import Any

from driftcheck.nvidia.nvml import clock_event_reasons, time_counters_us
from driftcheck.nvidia.values import CLOCK_EVENT_COUNTERS, identity_key, integer, normalize_bus_id, number, text_value

FIELDS = ("sm_mhz", "mem_mhz", "power_w", "power_limit_w", "temp_c", "util_pct", "mem_util_pct", "memory_used_mib")

# The query of the nvidia-smi path. `clocks_event_reasons` was `clocks_throttle_reasons` before driver 535.
SMI_QUERY = ("index", "uuid", "pci.bus_id", "name", "clocks.sm", "clocks.mem", "power.draw", "power.limit",
             "temperature.gpu", "utilization.gpu", "utilization.memory", "memory.used", "clocks_event_reasons.active")
SMI_QUERY_OLD_DRIVER = tuple(f.replace("clocks_event_reasons", "clocks_throttle_reasons") for f in SMI_QUERY)
# Drivers >= 570 also print the accumulated time of each reason (us); earlier ones refuse these fields.
SMI_COUNTER_FIELDS = tuple(f"clocks_event_reasons_counters.{name}" for name in CLOCK_EVENT_COUNTERS)
SMI_QUERY_COUNTERS = SMI_QUERY + SMI_COUNTER_FIELDS
# The queries the nvidia-smi path tries in turn, until one prints rows.
SMI_QUERIES = (SMI_QUERY_COUNTERS, SMI_QUERY, SMI_QUERY_OLD_DRIVER)
SMI_APPS_ARGV = ("nvidia-smi", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader")


def smi_stream_argv(interval_ms: int, fields: Sequence[str] = SMI_QUERY) -> list[str]:
    """The nvidia-smi command that prints one CSV row per GPU every `interval_ms`."""
    return ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv", "-lms", str(interval_ms)]


def empty_reading() -> dict[str, Any]:
    """A reading with nothing known yet."""
    reading: dict[str, Any] = dict.fromkeys(FIELDS)
    reading.update({"index": None, "name": None, "reasons": None, "pids": None, "counters_us": None})
    return reading


# --- NVML ---------------------------------------------------------------------------------------------

def _call(nv: Any, name: str, *args: Any) -> Any:
    function = getattr(nv, name, None)
    if function is None:
        return None
    try:
        return function(*args)
    except nv.NVMLError:
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _watts(milliwatts: Any) -> float | None:
    return None if milliwatts is None else round(float(milliwatts) / 1000.0, 2)


def _pids(nv: Any, handle: Any) -> list[int] | None:
    found = None
    for name in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        processes = _call(nv, name, handle)
        if processes is not None:
            found = (found or []) + [int(p.pid) for p in processes]
    return sorted(set(found)) if found is not None else None


def read_nvml_handles(nv: Any) -> list[Any]:
    """The device handles of an initialised NVML."""
    return [nv.nvmlDeviceGetHandleByIndex(i) for i in range(int(nv.nvmlDeviceGetCount()))]


def nvml_reading(nv: Any, handles: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """One reading of every GPU through the (initialised) NVML module `nv`."""
    out = {}
    for index, handle in enumerate(handles):
        reading = empty_reading()
        pci = _call(nv, "nvmlDeviceGetPciInfo", handle)
        utilization = _call(nv, "nvmlDeviceGetUtilizationRates", handle)
        memory = _call(nv, "nvmlDeviceGetMemoryInfo", handle)
        mask = _call(nv, "nvmlDeviceGetCurrentClocksEventReasons", handle)
        if mask is None:
            mask = _call(nv, "nvmlDeviceGetCurrentClocksThrottleReasons", handle)
        used = getattr(memory, "used", None)
        reading.update({
            "index": index, "name": _text(_call(nv, "nvmlDeviceGetName", handle)),
            "sm_mhz": _call(nv, "nvmlDeviceGetClockInfo", handle, 1),
            "mem_mhz": _call(nv, "nvmlDeviceGetClockInfo", handle, 2),
            "power_w": _watts(_call(nv, "nvmlDeviceGetPowerUsage", handle)),
            "power_limit_w": _watts(_call(nv, "nvmlDeviceGetEnforcedPowerLimit", handle)),
            "temp_c": _call(nv, "nvmlDeviceGetTemperature", handle, 0),
            "util_pct": getattr(utilization, "gpu", None), "mem_util_pct": getattr(utilization, "memory", None),
            "memory_used_mib": None if used is None else int(used) // 2**20,
            "reasons": None if mask is None else clock_event_reasons(int(mask)),
            "pids": _pids(nv, handle),
            "counters_us": time_counters_us(nv, handle),
        })
        uuid = _text(_call(nv, "nvmlDeviceGetUUID", handle))
        out[identity_key(uuid, normalize_bus_id(_text(getattr(pci, "busId", None))), index)] = reading
    return out


# --- nvidia-smi CSV -------------------------------------------------------------------------------------

_SMI_FIELDS = {"clocks.sm": "sm_mhz", "clocks.current.sm": "sm_mhz", "clocks.mem": "mem_mhz",
               "clocks.current.memory": "mem_mhz", "power.draw": "power_w", "power.draw.instant": "power_w",
               "power.limit": "power_limit_w", "enforced.power.limit": "power_limit_w",
               "temperature.gpu": "temp_c", "utilization.gpu": "util_pct", "utilization.memory": "mem_util_pct",
               "memory.used": "memory_used_mib"}


def smi_header(line: str) -> list[str] | None:
    """The field names of a `--format=csv` header line (units in brackets dropped), or None if it is not one."""
    cells = next(csv.reader(io.StringIO(line), skipinitialspace=True), [])
    names = [cell.split("[")[0].strip() for cell in cells]
    known = {"index", "uuid", "pci.bus_id", "timestamp", "name", *_SMI_FIELDS}
    if not names or not any(name in known or name.startswith("clocks_") for name in names):
        return None
    return names


def smi_row(header: Sequence[str], line: str) -> tuple[str, dict[str, Any]] | None:
    """(GPU key, reading) from one CSV data row under `header`; None for a line that is not such a row."""
    cells = next(csv.reader(io.StringIO(line), skipinitialspace=True), [])
    if len(cells) != len(header):
        return None
    row = dict(zip(header, cells, strict=True))
    reading = empty_reading()
    reading["index"] = integer(row.get("index"))
    reading["name"] = text_value(row.get("name"))
    for field, raw in row.items():
        target = _SMI_FIELDS.get(field)
        if target is not None and reading[target] is None:
            value = number(raw)
            reading[target] = float(value) if value is not None and target.endswith("_w") else value
        elif field in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
            mask = text_value(raw)
            if mask is not None:
                with contextlib.suppress(ValueError):
                    reading["reasons"] = clock_event_reasons(int(mask, 16))
        elif field.startswith("clocks_event_reasons_counters."):
            value = integer(raw)
            if value is not None:
                reading["counters_us"] = (reading["counters_us"] or {}) | {field.partition(".")[2]: value}
    key = identity_key(text_value(row.get("uuid")), normalize_bus_id(row.get("pci.bus_id")), reading["index"])
    return key, reading


def smi_apps(text: str) -> dict[str, list[int]]:
    """GPU UUID -> process ids, from `nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader`."""
    out: dict[str, list[int]] = {}
    for cells in csv.reader(io.StringIO(text), skipinitialspace=True):
        if len(cells) >= 2 and (pid := integer(cells[1])) is not None:
            out.setdefault(cells[0].strip(), []).append(pid)
    return {uuid: sorted(set(pids)) for uuid, pids in out.items()}
