"""GPU state around a benchmark. Where no GPU is, a stand-in with NVML's interface checks the reading;
where NVML initialises (a GPU machine), the live tests read the real driver instead."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

from driftcheck.baselines.clocks import cpu_state, gpu_state
from driftcheck.nvidia.values import clock_event_names


def _live_nvml() -> object | None:
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no library or no driver
        return None
    return pynvml


NVML = _live_nvml()
needs_gpu = pytest.mark.skipif(NVML is None, reason="NVML does not initialise here (no NVIDIA driver or pynvml)")
needs_no_gpu = pytest.mark.skipif(NVML is not None, reason="an NVIDIA driver is present: the no-driver path "
                                                          "cannot be observed on this machine")


class FakeNvml(SimpleNamespace):
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - NVML's name
        return f"handle{index}"

    def nvmlDeviceGetClockInfo(self, handle: str, clock: int) -> int:  # noqa: N802
        return {1: 1980, 2: 3201}[clock]

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> int:  # noqa: N802
        return 61

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:  # noqa: N802
        raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: str) -> int:  # noqa: N802
        return 0x4 | 0x40


def test_clock_event_bits_use_the_gpu_probe_names() -> None:
    # Sorted by name, the order the gpu probe keeps them in; one decoding for NVML reader and benchmarks.
    assert clock_event_names(0x1 | 0x20 | 0x80) == ["hw_power_brake_slowdown", "idle", "sw_thermal_slowdown"]
    assert clock_event_names(0) == []


def test_gpu_state_reads_each_field_and_survives_an_unsupported_one() -> None:
    state = gpu_state(0, FakeNvml())
    assert state == {"sm_mhz": 1980, "memory_mhz": 3201, "temperature_c": 61, "power_draw_w": None,
                     "clock_event_reasons": ["hw_thermal_slowdown", "sw_power_cap"]}


@needs_no_gpu
def test_without_a_driver_gpu_state_is_empty() -> None:
    # No NVIDIA driver: pynvml's init fails, and that is not an error.
    assert gpu_state(0) == {}


@needs_gpu
def test_with_a_driver_gpu_state_reads_the_real_gpu() -> None:
    state = gpu_state(0)
    assert isinstance(state["sm_mhz"], int) and state["sm_mhz"] > 0
    assert isinstance(state["temperature_c"], int)
    assert isinstance(state["clock_event_reasons"], list)


def test_cpu_state_reads_the_live_machine() -> None:
    state = cpu_state()
    assert set(state) == {"cpu_mhz", "load_1m"}
    assert state["load_1m"] is not None and state["load_1m"] >= 0
