"""The state that moves a benchmark's result, read before and after it: clocks, temperature, throttling.

Throttling during a run is a finding, not noise, so each GPU result carries what NVML said at both
ends. Without NVML (no driver, no pynvml) the state is an empty mapping, never an error.
"""

from __future__ import annotations

import importlib
from typing import Any

import psutil

from driftcheck.nvidia.values import clock_event_names


def _nvml() -> Any | None:
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no library or no driver: there is simply no GPU state to read
        return None
    return pynvml


def _read(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except Exception:  # noqa: BLE001 - one unreadable field must not lose the others
        return None


def gpu_state(index: int, nvml: Any | None = None) -> dict[str, Any]:
    """SM/memory clock, temperature, power and clock-event reasons of GPU `index` ({} without NVML)."""
    nvml = nvml if nvml is not None else _nvml()
    if nvml is None:
        return {}
    handle = _read(nvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return {}
    power_mw = _read(nvml.nvmlDeviceGetPowerUsage, handle)
    reasons = _read(nvml.nvmlDeviceGetCurrentClocksEventReasons, handle)
    if reasons is None:
        reasons = _read(nvml.nvmlDeviceGetCurrentClocksThrottleReasons, handle)
    return {
        "sm_mhz": _read(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM),
        "memory_mhz": _read(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_MEM),
        "temperature_c": _read(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU),
        "power_draw_w": None if power_mw is None else round(power_mw / 1000.0, 1),
        "clock_event_reasons": None if reasons is None else clock_event_names(int(reasons)),
    }


def cpu_state() -> dict[str, Any]:
    """Current CPU frequency and load, where the OS tells them."""
    freq = _read(psutil.cpu_freq)
    load = _read(psutil.getloadavg)
    return {"cpu_mhz": None if not freq else round(float(freq.current), 1),
            "load_1m": None if not load else round(float(load[0]), 2)}


def device_state(device: str, gpu_index: int | None) -> dict[str, Any]:
    """The state to record around a benchmark on `device` (GPU `gpu_index` when on cuda)."""
    if device == "cuda" and gpu_index is not None:
        return gpu_state(gpu_index)
    return cpu_state()
