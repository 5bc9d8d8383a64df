"""Compute capability and firmware (GSP mode and version, InfoROM image) from every GPU source.

The values are those the recorded outputs print (tests/data/nvidia-real, tests/data/nvidia: SOURCES.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from driftcheck.nvidia import parse_smi_xml, read_nvml
from driftcheck.nvidia.smi_csv import parse_query_csv
from driftcheck.nvidia.smi_text import parse_smi_text
from tests.conftest import DATA
from tests.nvidia.fake_pynvml import FakeNvml, dual_rtx_2070

REAL = DATA / "nvidia-real"


def _only_gpu(data: dict[str, Any]) -> dict[str, Any]:
    gpus: dict[str, Any] = data["gpu"]["gpus"]
    return next(iter(gpus.values()))


def test_q_reads_the_gsp_firmware_and_inforom_versions() -> None:
    h100 = parse_smi_text((REAL / "text" / "q_h100-80gb-hbm3-x8_565.57.01_thamada.txt").read_text("utf-8"))
    assert _only_gpu(h100)["firmware"] == {"gsp_mode": None, "gsp_version": "565.57.01",
                                           "inforom_image": "G520.0200.00.05"}
    assert _only_gpu(h100)["compute_capability"] is None  # -q prints none
    # "GSP Firmware Version : N/A": GSP off on that L40S, no version.
    l40s = parse_smi_text((REAL / "text" / "q_l40s-x1_550.127.05_thamada.txt").read_text("utf-8"))
    assert _only_gpu(l40s)["firmware"]["gsp_version"] is None


def test_xml_reads_the_gsp_firmware_and_inforom_versions() -> None:
    laptop = parse_smi_xml((REAL / "xml" / "rtx-a5000-laptop_575.57.08_llamaland.xml").read_text("utf-8"))
    assert _only_gpu(laptop)["firmware"] == {"gsp_mode": None, "gsp_version": "575.57.08",
                                             "inforom_image": "G001.0000.03.03"}


def test_query_csv_reads_compute_capability_gsp_mode_and_inforom() -> None:
    csv = parse_query_csv((REAL / "csv" / "query-gpu_rtx-2080-super_610.57.04_idle_exporter.csv").read_text("utf-8"))
    gpu = _only_gpu(csv)
    assert gpu["compute_capability"] == "7.5"
    assert gpu["firmware"] == {"gsp_mode": "Enabled", "gsp_version": None, "inforom_image": "G001.0000.02.04"}


def test_nvml_reads_them_as_the_query_csv_prints_them() -> None:
    gpus = dual_rtx_2070()
    for gpu in gpus:  # what the recorded RTX 2080 SUPER query (Turing too) answers: compute_cap 7.5, GSP Enabled
        gpu.update(compute_cap=(7, 5), gsp_mode=1)
    record = next(iter(read_nvml(FakeNvml(gpus))["gpu"]["gpus"].values()))
    assert record["compute_capability"] == "7.5"
    assert record["firmware"] == {"gsp_mode": "Enabled", "gsp_version": "590.44.01",
                                  "inforom_image": "G001.0000.02.04"}
    unsupported = next(iter(read_nvml(FakeNvml(dual_rtx_2070()))["gpu"]["gpus"].values()))
    assert unsupported["compute_capability"] is None and unsupported["firmware"]["gsp_mode"] is None


def test_a_new_driver_and_its_gsp_firmware_are_one_cause(cli: Callable[..., Any]) -> None:
    a = DATA / "nvidia" / "text" / "q_h100-80gb-hbm3-x8_535.161.08.txt"
    b = DATA / "nvidia" / "text" / "q_h100-80gb-hbm3-x8_535.183.01.txt"
    report = json.loads(cli("explain", str(a), str(b), "--format", "json").stdout)
    with_firmware = [e for e in report["explanations"] if any(".firmware." in str(x) for x in e["evidence"])]
    assert [e["title"] for e in with_firmware] == ["NVIDIA driver 535.161.08 -> 535.183.01"]
    assert sum(".firmware.gsp_version" in str(x) for x in with_firmware[0]["evidence"]) == 8


def test_nvml_reads_the_nvlink_error_counters_where_the_driver_counts_them() -> None:
    gpus = dual_rtx_2070()
    for i, other in ((0, 1), (1, 0)):
        gpus[i]["nvlinks"] = {0: {"state": 1, "version": 4, "remote": gpus[other]["bus_id"]}}
    # By nvmlNvLinkErrorCounter_t: DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2, DL_CRC_DATA 3.
    gpus[0]["nvlinks"][0]["errors"] = {0: 12, 1: 0, 2: 5, 3: 1}
    data = read_nvml(FakeNvml(gpus))["gpu"]["gpus"]
    first, second = data["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"], data["GPU-12345678-aaaa-bbbb-cccc-0123456789cd"]
    assert first["nvlink"]["0"]["errors"] == {"replay": 12, "recovery": 0, "crc_flit": 5, "crc_data": 1}
    assert "errors" not in second["nvlink"]["0"]  # Not Supported: no counters claimed
