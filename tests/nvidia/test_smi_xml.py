"""Every recorded `nvidia-smi -q -x` (schemas v7..v13 and no DOCTYPE) parses to concrete, checked values."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftcheck.nvidia import NvidiaFormatError, parse_smi_xml
from tests.nvidia.helpers import NVIDIA_DATA, nvidia_text

# file, <gpu> elements, attached_gpus, model, driver, CUDA, link gen cur/max, width cur/max, SM MHz, power limit W,
# clock event reasons of the first GPU (None: the output has none readable)
XML_CASES = [
    ("a100-sxm4-40gb_mig-2-instances_510.47.03_v11.xml", 1, 1, "NVIDIA A100-SXM4-40GB", "510.47.03", "11.6",
     4, 4, 16, 16, 1410, 400.0, []),
    ("a100-sxm4-80gb_mig-enabled_1of4_535.54.03_v12.xml", 1, 4, "NVIDIA A100-SXM4-80GB", "535.54.03", "12.2",
     4, 4, 16, 16, 1275, 500.0, []),
    ("a10g_515.105.01_v11.xml", 1, 1, "NVIDIA A10G", "515.105.01", "11.7", 1, 4, 8, 16, 210, 300.0, ["idle"]),
    ("grid-k520_352.99_v7.xml", 1, 1, "GRID K520", "352.99", None, 1, 3, 16, 16, 324, 125.0, ["idle"]),
    ("grid-p4-1q-vgpu_513.46_v11.xml", 1, 1, "GRID P4-1Q", "513.46", "11.6", None, None, None, None, 0, None, None),
    ("gt-1030_470.74_v11.xml", 1, 1, "NVIDIA GeForce GT 1030", "470.74", "11.4", 3, 3, 4, 4, 1265, 30.0, ["idle"]),
    ("gtx-1660-ti-graphics-device_418.43_nodtd.xml", 1, 1, "Graphics Device", "418.43", "10.1",
     1, 3, 16, 16, 300, 130.0, ["idle"]),
    ("quadro-p2000_525.125.06_v12.xml", 1, 1, "Quadro P2000", "525.125.06", "12.0", 1, 3, 8, 16, 139, 75.0, ["idle"]),
    ("quadro-p400_418.43_nodtd.xml", 1, 1, "Quadro P400", "418.43", "10.1", 1, 3, 16, 16, 139, None, ["idle"]),
    ("rtx-2070-x2_590.44.01_v13.xml", 2, 2, "NVIDIA GeForce RTX 2070", "590.44.01", "13.1",
     1, 3, 8, 16, 300, 175.0, ["idle"]),
    ("rtx-2080-ti-x2_410.73_v10.xml", 2, 2, "GeForce RTX 2080 Ti", "410.73", "10.0",
     1, 3, 16, 16, 300, 250.0, ["idle"]),
    ("rtx-2080-x2_590.44.01_v13.xml", 2, 2, "NVIDIA GeForce RTX 2080", "590.44.01", "13.1",
     1, 3, 8, 16, 300, 215.0, ["idle"]),
    ("rtx-2080_windows-wddm_516.59_v11.xml", 1, 1, "NVIDIA GeForce RTX 2080", "516.59", "11.7",
     3, 3, 8, 16, 193, 275.0, ["idle"]),
    ("rtx-3060-laptop_515.65.01_v11.xml", 1, 1, "NVIDIA GeForce RTX 3060 Laptop GPU", "515.65.01", "11.7",
     1, 4, 8, 16, 210, None, ["idle"]),
    ("rtx-3060_570.124.04_v12.xml", 1, 1, "NVIDIA GeForce RTX 3060", "570.124.04", "12.8",
     1, 4, 16, 16, 210, 170.0, ["idle"]),
    ("rtx-3080_595.58.03_v13.xml", 1, 1, "NVIDIA GeForce RTX 3080", "595.58.03", "13.2", 4, 4, 16, 16, 1950, 320.0, []),
    ("rtx-3080_windows-wddm_536.40_v12.xml", 1, 1, "NVIDIA GeForce RTX 3080", "536.40", "12.2",
     4, 4, 16, 16, 210, 336.0, ["idle"]),
    ("rtx-3090_525.147.05_v12.xml", 1, 1, "NVIDIA GeForce RTX 3090", "525.147.05", "12.0",
     1, 4, 16, 16, 0, 200.0, ["idle"]),
    ("rtx-3090_590.44.01_v13.xml", 1, 1, "NVIDIA GeForce RTX 3090", "590.44.01", "13.1",
     1, 4, 16, 16, 210, 350.0, ["sw_power_cap"]),
    ("rtx-4000-sff-ada_595.84_v13.xml", 1, 1, "NVIDIA RTX 4000 SFF Ada Generation", "595.84", "13.2",
     1, 4, 16, 16, 210, 70.0, ["idle"]),
    ("rtx-4090_535.86.05_v12.xml", 1, 1, "NVIDIA GeForce RTX 4090", "535.86.05", "12.2",
     1, 3, 16, 16, 210, 450.0, ["idle"]),
    ("rtx-a5000-x2_590.44.01_v13.xml", 2, 2, "NVIDIA RTX A5000", "590.44.01", "13.1",
     1, 4, 16, 16, 210, 230.0, ["idle"]),
    ("rtx-pro-6000-blackwell-maxq_590.44.01_v13.xml", 1, 1, "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
     "590.44.01", "13.1", 1, 4, 16, 16, 180, 300.0, []),
    ("tesla-k80-x4_430.26_v10.xml", 4, 4, "Tesla K80", "430.26", None, 3, 3, 16, 16, 810, 149.0,
     ["applications_clocks_setting"]),
    ("tesla-p100-pcie-16gb_510.47.03_v11.xml", 1, 1, "Tesla P100-PCIE-16GB", "510.47.03", "11.6",
     3, 3, 16, 16, 405, 250.0, ["idle"]),
    ("tesla-t4_515.105.01_v11.xml", 1, 1, "Tesla T4", "515.105.01", "11.7", 3, 3, 8, 16, 585, 70.0, []),
    ("tesla-v100-sxm3-32gb_1of16_retired-pages_410.104_v10.xml", 1, 16, "Tesla V100-SXM3-32GB", "410.104", "10.0",
     3, 3, 16, 16, 135, 350.0, ["idle"]),
]


def test_every_recorded_xml_has_a_case() -> None:
    assert sorted(p.name for p in (NVIDIA_DATA / "xml").glob("*.xml")) == sorted(case[0] for case in XML_CASES)


@pytest.mark.parametrize(("name", "elements", "attached", "model", "driver", "cuda", "gen", "gen_max", "width",
                          "width_max", "sm_mhz", "limit_w", "reasons"), XML_CASES, ids=[c[0] for c in XML_CASES])
def test_xml_values(name: str, elements: int, attached: int, model: str, driver: str, cuda: str | None, gen: int,
                    gen_max: int, width: int, width_max: int, sm_mhz: int, limit_w: float | None,
                    reasons: list[str] | None) -> None:
    parsed = parse_smi_xml(nvidia_text(f"xml/{name}"))
    gpu, pcie = parsed["gpu"], parsed["pcie"]
    assert gpu["source"] == "nvidia-smi-xml" and pcie["source"] == "nvidia-smi"
    assert (gpu["driver_version"], gpu["cuda_driver_version"], gpu["gpu_count"]) == (driver, cuda, attached)
    assert len(gpu["gpus"]) == elements and list(gpu["gpus"]) == list(pcie["gpus"])
    first_key = next(iter(gpu["gpus"]))
    first = gpu["gpus"][first_key]
    assert first["index"] == 0 and {g["name"] for g in gpu["gpus"].values()} == {model}
    assert pcie["gpus"][first_key]["link"] == {"gen_current": gen, "gen_max": gen_max, "width_current": width,
                                               "width_max": width_max}
    assert first["clocks"]["sm_mhz"] == sm_mhz
    assert first["power"]["limit_w"] == limit_w
    assert first["clock_event_reasons"] == reasons


def test_throttle_reasons_of_old_schema_and_event_reasons_of_new_decode_alike() -> None:
    old = parse_smi_xml(nvidia_text("xml/rtx-2080-ti-x2_410.73_v10.xml"))["gpu"]["gpus"]  # clocks_throttle_reasons
    new = parse_smi_xml(nvidia_text("xml/rtx-3090_590.44.01_v13.xml"))["gpu"]["gpus"]  # clocks_event_reasons
    assert [g["clock_event_reasons"] for g in old.values()] == [["idle"], ["sw_power_cap"]]
    assert [g["clock_event_reasons"] for g in new.values()] == [["sw_power_cap"]]


def test_power_limit_below_default_is_visible() -> None:
    power = parse_smi_xml(nvidia_text("xml/rtx-3090_525.147.05_v12.xml"))["gpu"]["gpus"][
        "GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]["power"]
    assert power == {"draw_w": 27.23, "limit_w": 200.0, "default_limit_w": 350.0, "enforced_limit_w": 200.0,
                     "min_limit_w": 100.0, "max_limit_w": 375.0}


def test_mig_instances_and_processes() -> None:
    gpu = parse_smi_xml(nvidia_text("xml/a100-sxm4-40gb_mig-2-instances_510.47.03_v11.xml"))["gpu"]["gpus"]
    (record,) = gpu.values()
    assert record["mig"]["mode_current"] == "Enabled"
    assert sorted(record["mig"]["instances"]) == ["1", "2"]
    assert record["mig"]["instances"]["1"]["compute_instances"]["0"]["device_index"] == 0
    t4 = next(iter(parse_smi_xml(nvidia_text("xml/tesla-t4_515.105.01_v11.xml"))["gpu"]["gpus"].values()))
    assert len(t4["processes"]) == 2
    assert all(p["used_memory_mib"] and p["pid"] == int(pid) for pid, p in t4["processes"].items())


def test_retired_pages_and_ecc_counts() -> None:
    (v100,) = parse_smi_xml(nvidia_text(
        "xml/tesla-v100-sxm3-32gb_1of16_retired-pages_410.104_v10.xml"))["gpu"]["gpus"].values()
    assert v100["retired_pages"] == {"single_bit": 0, "double_bit": 2, "pending": True}
    assert v100["ecc"]["mode_current"] == "Enabled"
    assert v100["ecc"]["volatile"] == {"corrected": 1, "uncorrected": 1}


def test_repeated_uuid_falls_back_to_bus_id_keys() -> None:
    gpus = parse_smi_xml(nvidia_text("xml/rtx-2080-x2_590.44.01_v13.xml"))["gpu"]["gpus"]
    assert list(gpus) == ["00000000:01:00.0", "00000000:02:00.0"]
    assert [g["uuid"] for g in gpus.values()] == ["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"] * 2


def test_out_of_bus_order_gpus_keep_nvidia_smi_order_as_index() -> None:
    gpus = parse_smi_xml(nvidia_text("xml/tesla-k80-x4_430.26_v10.xml"))["gpu"]["gpus"]
    assert [(g["index"], g["pci_bus_id"]) for g in gpus.values()][:2] == [(0, "00001580:00:00.0"),
                                                                          (1, "00002DF7:00:00.0")]


@pytest.mark.parametrize("text", ["", "<html><body>hi</body></html>", "<nvidia_smi_log><gpu>", "plain words"])
def test_not_nvidia_smi_xml_is_a_format_error(text: str) -> None:
    with pytest.raises(NvidiaFormatError):
        parse_smi_xml(text)


def test_fixture_sources_are_kept_beside_the_data() -> None:
    assert (Path(NVIDIA_DATA) / "SOURCES.md").read_text("utf-8").startswith("# ")
