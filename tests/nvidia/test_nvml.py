"""The NVML reader, fed a fake pynvml (NVML cannot run without a GPU), against the XML path's shape."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from driftcheck.hosts import LocalHost
from driftcheck.nvidia import parse_smi_xml, read_nvml
from driftcheck.nvidia.gather import gather_nvidia
from driftcheck.probes.base import ProbeUnavailable
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.pcie import PcieProbe
from tests.nvidia.fake_pynvml import FakeNvml, dual_rtx_2070
from tests.nvidia.helpers import nvidia_text


def _same_shape(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where the two structures differ in keys (a null on either side is a legal unread value)."""
    if isinstance(a, dict) and isinstance(b, dict):
        problems = [f"{path}: keys {sorted(set(a) ^ set(b))}"] if set(a) != set(b) else []
        for key in set(a) & set(b):
            problems += _same_shape(a[key], b[key], f"{path}.{key}")
        return problems
    if a is None or b is None:
        return []
    return [] if isinstance(a, dict) == isinstance(b, dict) else [f"{path}: {type(a).__name__} vs {type(b).__name__}"]


def test_nvml_and_xml_give_the_same_shape_and_values_for_the_same_machine() -> None:
    nvml = read_nvml(FakeNvml(dual_rtx_2070()))
    xml = parse_smi_xml(nvidia_text("xml/rtx-2070-x2_590.44.01_v13.xml"))
    assert _same_shape(nvml["gpu"], xml["gpu"]) == []
    assert _same_shape(nvml["pcie"]["gpus"], xml["pcie"]["gpus"]) == []
    assert nvml["gpu"]["source"] == "nvml" and nvml["pcie"]["source"] == "nvml"
    assert list(nvml["gpu"]["gpus"]) == list(xml["gpu"]["gpus"])
    # NVML reads "no links" ({}); the XML does not report NVLink at all (null). The vGPU licence is read
    # from nvidia-smi only, the policy violation time from NVML only (docs/data-shapes.md); this fake driver
    # answers no counters, which the XML of 590 has.
    ignore = {"nvlink", "clock_event_time_us", "violation_time_us", "vgpu"}
    for key, from_xml in xml["gpu"]["gpus"].items():
        from_nvml = nvml["gpu"]["gpus"][key]
        assert {k: v for k, v in from_nvml.items() if k not in ignore} == {
            k: v for k, v in from_xml.items() if k not in ignore}
    for key, link in xml["pcie"]["gpus"].items():
        assert nvml["pcie"]["gpus"][key]["link"] == link["link"]
    assert nvml["gpu"]["driver_version"] == xml["gpu"]["driver_version"] == "590.44.01"
    assert nvml["gpu"]["cuda_driver_version"] == xml["gpu"]["cuda_driver_version"] == "13.1"


def test_nvml_topology_p2p_and_affinity() -> None:
    gpus = dual_rtx_2070()
    gpus[0]["affinity"] = [0xFFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF]  # CPUs 0-47 and 64-111
    gpus[0]["numa"] = 0
    pcie = read_nvml(FakeNvml(gpus, common_ancestor=30, p2p_status=0))["pcie"]
    assert pcie["topology"]["pairs"] == {"GPU0~GPU1": "PHB"}
    assert pcie["topology"]["cpu_affinity"] == {"GPU0": "0-47,64-111", "GPU1": "0-15"}
    assert pcie["topology"]["numa_affinity"] == {"GPU0": "0", "GPU1": None}
    assert pcie["p2p"] == {"GPU0~GPU1": {"read": True, "write": True, "nvlink": True, "atomics": True}}
    refused = read_nvml(FakeNvml(dual_rtx_2070(), common_ancestor=50, p2p_status=2))["pcie"]
    assert refused["topology"]["pairs"] == {"GPU0~GPU1": "SYS"}
    assert refused["p2p"]["GPU0~GPU1"]["read"] is False


def test_nvml_nvlink_pairs_mig_ecc_and_processes() -> None:
    gpus = dual_rtx_2070()
    for i, other in ((0, 1), (1, 0)):
        gpus[i]["nvlinks"] = {link: {"state": 1, "version": 4, "remote": gpus[other]["bus_id"]} for link in range(4)}
    gpus[0]["ecc"] = {"mode": (1, 0), "counts": {(0, 0): 3, (1, 0): 0, (0, 1): 7, (1, 1): 1},
                      "retired": {0: [], 1: [0x1000, 0x2000]}, "retired_pending": 1, "remapped": (0, 1, 0, 0)}
    gpus[0]["mig"] = (1, 1)
    gpus[0]["mig_devices"] = [{"gi": 2, "ci": 0, "sms": 60, "memory_mib": 40448},
                              {"gi": 3, "ci": 0, "sms": 32, "memory_mib": 20096}]
    gpus[0]["processes"] = [{"pid": 4242, "bytes": 2048 * 2**20}]
    gpus[0]["reasons"] = 0x4 | 0x80
    fake = FakeNvml(gpus)
    fake.process_names[4242] = "/usr/bin/python3"
    data = read_nvml(fake)
    first = data["gpu"]["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]
    assert data["pcie"]["topology"]["pairs"] == {"GPU0~GPU1": "NV4"}
    assert first["nvlink"]["0"] == {"state": "Active", "version": 4, "remote_pci_bus_id": "00000000:02:00.0"}
    assert first["ecc"] == {"mode_current": "Enabled", "mode_pending": "Disabled",
                            "volatile": {"corrected": 3, "uncorrected": 0}, "aggregate": {"corrected": 7,
                                                                                        "uncorrected": 1}}
    assert first["retired_pages"] == {"single_bit": 0, "double_bit": 2, "pending": True}
    assert first["remapped_rows"] == {"correctable": 0, "uncorrectable": 1, "pending": False, "failure": False}
    assert sorted(first["mig"]["instances"]) == ["2", "3"]
    assert first["mig"]["instances"]["2"] == {"profile": None, "memory_total_mib": 40448,
                                              "compute_instances": {"0": {"device_index": 0,
                                                                          "multiprocessor_count": 60}}}
    assert first["processes"] == {"4242": {"pid": 4242, "name": "/usr/bin/python3", "type": "C",
                                           "used_memory_mib": 2048}}
    assert first["clock_event_reasons"] == ["hw_power_brake_slowdown", "sw_power_cap"]


def test_local_host_gathers_through_nvml_and_shuts_it_down(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml(dual_rtx_2070())
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    raw = gather_nvidia(LocalHost(), with_topology=True)
    assert list(raw) == ["nvml"] and fake.initialised is False
    assert GpuProbe().parse(raw)["source"] == "nvml"
    pcie = PcieProbe().parse({**raw, "sysfs": {}})
    assert pcie["source"] == "nvml" and pcie["topology"]["pairs"] == {"GPU0~GPU1": "PHB"} and pcie["sysfs"] == {}


def test_nvml_failing_mid_read_falls_back_to_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml(dual_rtx_2070())

    def lost() -> int:
        raise fake.NVMLError("GPU is lost")

    monkeypatch.setattr(fake, "nvmlDeviceGetCount", lost)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setenv("PATH", "/nonexistent")  # and no nvidia-smi to fall back to
    with pytest.raises(ProbeUnavailable, match="NVML read failed: GPU is lost; nvidia-smi not found"):
        gather_nvidia(LocalHost(), with_topology=False)


def test_nvml_counters_read_as_nvidia_smi_prints_them() -> None:
    """The counters of the recorded RTX 2070 pair (its XML: `clocks_event_reasons_counters`, driver 590),
    served in NVML's nanoseconds, read back as the XML's microseconds; the policy violations beside them."""
    xml = parse_smi_xml(nvidia_text("xml/rtx-2070-x2_590.44.01_v13.xml"))
    gpus = dual_rtx_2070()
    for gpu, from_xml in zip(gpus, xml["gpu"]["gpus"].values(), strict=True):
        counted = from_xml["clock_event_time_us"]
        gpu["fields"] = {field: counted[name] * 1000 for name, field in (
            ("sw_power_cap", 74), ("sync_boost", 76), ("sw_thermal_slowdown", 269), ("hw_thermal_slowdown", 270),
            ("hw_power_brake_slowdown", 271))}
        gpu["violations"] = {0: counted["sw_power_cap"] * 1000 + 999, 1: 0, 2: 0, 3: 5_000_000, 4: 7_000, 5: 0}
    nvml = read_nvml(FakeNvml(gpus))
    for key, from_xml in xml["gpu"]["gpus"].items():
        from_nvml = nvml["gpu"]["gpus"][key]
        assert from_nvml["clock_event_time_us"] == from_xml["clock_event_time_us"]
        assert from_nvml["violation_time_us"] == {
            "power": from_xml["clock_event_time_us"]["sw_power_cap"], "thermal": 0, "sync_boost": 0,
            "board_limit": 5000, "low_utilization": 7, "reliability": 0,
            "total_app_clocks": None, "total_base_clocks": None}  # policies this driver does not count


def test_a_driver_without_counters_leaves_them_null() -> None:
    gpu = read_nvml(FakeNvml(dual_rtx_2070()))["gpu"]["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]
    assert gpu["clock_event_time_us"] is None and gpu["violation_time_us"] is None
