"""Every recorded `nvidia-smi -q` (full and `-d` partial) parses to concrete, checked values."""

from __future__ import annotations

import pytest

from driftcheck.nvidia import NvidiaFormatError, parse_smi_text, parse_smi_xml
from tests.nvidia.helpers import NVIDIA_DATA, nvidia_text

# file, GPU sections, Attached GPUs, model, driver, link gen/width (current), SM MHz, power limit W (first GPU)
TEXT_CASES = [
    ("q-d-clock_tesla-k80_375.66.txt", 1, 1, None, "375.66", None, None, 324, None),
    ("q-d-clock_tesla-p100_1of4_375.66.txt", 1, 4, None, "375.66", None, None, 405, None),
    ("q-d-page_retirement_x8_535.86.10_azure.txt", 8, 8, None, "535.86.10", None, None, None, None),
    ("q_a10_535.129.03.txt", 1, 1, "NVIDIA A10", "535.129.03", 4, 16, 225, 150.0),
    ("q_h100-80gb-hbm3-x8_535.161.08.txt", 8, 8, "NVIDIA H100 80GB HBM3", "535.161.08", 5, 16, 86, 700.0),
    ("q_h100-80gb-hbm3-x8_535.183.01.txt", 8, 8, "NVIDIA H100 80GB HBM3", "535.183.01", 5, 16, 345, 700.0),
    ("q_h100-80gb-hbm3_590.48.01_load.txt", 1, 1, "NVIDIA H100 80GB HBM3", "590.48.01", 5, 16, 1980, 700.0),
    ("q_h100-80gb-hbm3_mig-4-instances_590.48.01_idle.txt", 1, 1, "NVIDIA H100 80GB HBM3", "590.48.01",
     5, 16, 345, 700.0),
    ("q_h200_590.48.01_idle.txt", 1, 1, "NVIDIA H200", "590.48.01", 5, 16, 345, 700.0),
    ("q_h200_mig-5-instances_590.48.01_load.txt", 1, 1, "NVIDIA H200", "590.48.01", 5, 16, 1980, 700.0),
    ("q_l40s_595.80_idle.txt", 1, 1, "NVIDIA L40S", "595.80", 4, 16, 2520, 350.0),
    ("q_rtx-4090-x8_535.154.05.txt", 8, 8, "NVIDIA GeForce RTX 4090", "535.154.05", 4, 16, 2520, 450.0),
    ("q_titan-v_560.35.03.txt", 1, 1, "NVIDIA TITAN V", "560.35.03", 1, 16, 135, 250.0),
]


def test_every_recorded_text_output_has_a_case() -> None:
    names = sorted(p.name for p in (NVIDIA_DATA / "text").glob("*.txt"))
    assert names == sorted(case[0] for case in TEXT_CASES)


@pytest.mark.parametrize(("name", "sections", "attached", "model", "driver", "gen", "width", "sm_mhz", "limit_w"),
                         TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_text_values(name: str, sections: int, attached: int, model: str | None, driver: str, gen: int | None,
                     width: int | None, sm_mhz: int | None, limit_w: float | None) -> None:
    parsed = parse_smi_text(nvidia_text(f"text/{name}"))
    gpu = parsed["gpu"]
    assert gpu["source"] == "nvidia-smi-text"
    assert (gpu["driver_version"], gpu["gpu_count"], len(gpu["gpus"])) == (driver, attached, sections)
    key = next(iter(gpu["gpus"]))
    first = gpu["gpus"][key]
    assert first["name"] == model
    assert parsed["pcie"]["gpus"][key]["link"]["gen_current"] == gen
    assert parsed["pcie"]["gpus"][key]["link"]["width_current"] == width
    assert first["clocks"]["sm_mhz"] == sm_mhz
    assert first["power"]["limit_w"] == limit_w


def test_partial_clock_output_keys_by_bus_id_and_leaves_the_rest_null() -> None:
    gpus = parse_smi_text(nvidia_text("text/q-d-clock_tesla-k80_375.66.txt"))["gpu"]["gpus"]
    (key, k80), = gpus.items()
    assert key == "00000000:00:04.0"
    assert k80["application_clocks"] == {"graphics_mhz": 875, "memory_mhz": 2505}
    assert k80["default_application_clocks"] == {"graphics_mhz": 562, "memory_mhz": 2505}
    assert k80["max_clocks"] == {"sm_mhz": 875, "memory_mhz": 2505, "graphics_mhz": 875}
    assert k80["power"]["limit_w"] is None and k80["temperature"]["gpu_c"] is None


def test_page_retirement_only_output() -> None:
    gpus = parse_smi_text(nvidia_text("text/q-d-page_retirement_x8_535.86.10_azure.txt"))["gpu"]["gpus"]
    assert list(gpus)[0] == "00000001:00:00.0" and list(gpus)[-1] == "00000008:00:00.0"
    assert {str(g["retired_pages"]) for g in gpus.values()} == {str({"single_bit": 0, "double_bit": 0,
                                                                      "pending": False})}


def test_clocks_event_reasons_nested_under_hw_slowdown() -> None:
    gpus = parse_smi_text(nvidia_text("text/q_h100-80gb-hbm3-x8_535.161.08.txt"))["gpu"]["gpus"]
    assert next(iter(gpus.values()))["clock_event_reasons"] == ["hw_power_brake_slowdown", "hw_slowdown"]


def test_mig_devices_grouped_by_gpu_instance_and_processes_read() -> None:
    (h200,) = parse_smi_text(nvidia_text("text/q_h200_mig-5-instances_590.48.01_load.txt"))["gpu"]["gpus"].values()
    instances = h200["mig"]["instances"]
    assert sorted(instances, key=int) == ["2", "3", "9", "10"]
    assert instances["2"]["memory_total_mib"] == 71424
    assert instances["2"]["compute_instances"] == {"0": {"device_index": 0, "multiprocessor_count": 16},
                                                   "1": {"device_index": 1, "multiprocessor_count": 32}}
    assert h200["processes"]["12267"] == {"pid": 12267, "name": "./gpu_burn", "type": "C", "used_memory_mib": 13526}


def test_text_and_xml_yield_the_same_shape() -> None:
    def shape(value: object) -> object:
        if isinstance(value, dict):
            # fabric is null where the GPU has none (the XML here), else {state, status}
            return {k: shape(v) for k, v in value.items() if k not in ("gpus", "processes", "instances", "fabric")}
        return None

    text = parse_smi_text(nvidia_text("text/q_h200_590.48.01_idle.txt"))
    xml = parse_smi_xml(nvidia_text("xml/rtx-3090_590.44.01_v13.xml"))
    assert shape(text) == shape(xml)
    assert shape(next(iter(text["gpu"]["gpus"].values()))) == shape(next(iter(xml["gpu"]["gpus"].values())))
    assert next(iter(text["gpu"]["gpus"].values()))["fabric"] == {"state": "Completed", "status": "Success"}


def test_unrelated_text_is_a_format_error() -> None:
    with pytest.raises(NvidiaFormatError):
        parse_smi_text("hello\nworld : 3\n")
