"""GPU state around a benchmark. NVML needs a GPU, so a stand-in with NVML's interface is used here;
the real path is exercised by `driftcheck bench` on a GPU machine."""

from __future__ import annotations

from types import SimpleNamespace

from driftcheck.baselines.clocks import clock_event_names, cpu_state, gpu_state


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
    assert clock_event_names(0x1 | 0x20 | 0x80) == ["idle", "sw_thermal_slowdown", "hw_power_brake_slowdown"]
    assert clock_event_names(0) == []


def test_gpu_state_reads_each_field_and_survives_an_unsupported_one() -> None:
    state = gpu_state(0, FakeNvml())
    assert state == {"sm_mhz": 1980, "memory_mhz": 3201, "temperature_c": 61, "power_draw_w": None,
                     "clock_event_reasons": ["sw_power_cap", "hw_thermal_slowdown"]}


def test_without_a_driver_gpu_state_is_empty() -> None:
    # This machine has no NVIDIA driver: pynvml's init fails, and that is not an error.
    assert gpu_state(0) == {}


def test_cpu_state_reads_the_live_machine() -> None:
    state = cpu_state()
    assert set(state) == {"cpu_mhz", "load_1m"}
    assert state["load_1m"] is not None and state["load_1m"] >= 0
