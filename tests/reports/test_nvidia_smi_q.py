"""`nvidia-smi -q` text pasted in public issues, drivers 340 (2017) to 555 (2024), Linux and Windows (WDDM):
the driver, CUDA, attached count and each GPU's name, UUID, bus id and VBIOS, as read by hand. Every paste
stops inside its GPU's section (users paste the head of a long output); what follows is not in the report.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.importer import import_texts, parse_text
from tests.conftest import DATA

SMIQ = DATA / "reports" / "smiq"

# driver, CUDA (absent before 410), GPUs attached, the pasted GPU's UUID, bus id, name, VBIOS, persistence mode.
EXPECTED = {
    "q_340_8800gt_2017.txt": ("340.102", None, 1, "GPU-da613ba8-27bb-76b9-2c57-d36a5905478a", "00000000:01:00.0",
                              "GeForce 8800 GT", "62.92.16.00.04", False),
    "q_396_gtx1080_docker_2019.txt": ("396.54", None, 1, "GPU-0200523e-f473-3a45-9b4a-fbbe0e41ccf8",
                                      "00000000:01:00.0", "GeForce GTX 1080", "86.04.60.00.80", False),
    "q_410_gtx960m_2018.txt": ("410.72", "10.0", 1, "GPU-101b1cf0-fdf7-b374-a62c-76b25134fcf2", "00000000:01:00.0",
                               "GeForce GTX 960M", "82.07.73.00.06", False),
    "q_442_windows_4gpus_cut_2020.txt": ("442.92", "10.2", 4, "GPU-95ef7c5d-fc11-835b-cd38-2020193cf8e0",
                                         "00000000:18:00.0", "GeForce GTX 1080 Ti", "86.02.39.00.22", None),
    "q_450_gtx780_prompt_2020.txt": ("450.66", "11.0", 1, "GPU-a230e637-c9e1-1b61-3830-a437b874d88d",
                                     "00000000:01:00.0", "GeForce GTX 780", "80.80.31.00.0D", False),
    "q_555_wddm_laptop_2024.txt": ("555.99", "12.5", 1, "GPU-317b1ee1-938f-259c-21e3-3bac71f77dd3",
                                   "00000000:01:00.0", "NVIDIA GeForce RTX 3070 Ti Laptop GPU", "94.04.7e.00.03", True),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_paste_keeps_driver_gpu_identity_and_vbios(name: str) -> None:
    text = (SMIQ / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "nvidia-smi-text"
    gpu = parse_text(text, name).parsed.probes["gpu"]
    driver, cuda, attached, uuid, bus, model, vbios, persistence = EXPECTED[name]
    assert (gpu["driver_version"], gpu["cuda_driver_version"], gpu["gpu_count"]) == (driver, cuda, attached)
    assert list(gpu["gpus"]) == [uuid]
    entry = gpu["gpus"][uuid]
    assert (entry["pci_bus_id"], entry["name"], entry["vbios_version"], entry["persistence_mode"]) == \
        (bus, model, vbios, persistence)


def test_one_gpu_of_four_is_not_the_whole_list() -> None:
    """`nvidia-smi -q -i 0` on a 4-GPU machine: the GPUs are not claimed whole, so no GPU counts as gone."""
    parsed = parse_text((SMIQ / "q_442_windows_4gpus_cut_2020.txt").read_text("utf-8"), "q").parsed
    assert "probes.gpu.data.gpus" not in parsed.complete


def test_two_machines_differ_by_board_and_vbios() -> None:
    from driftcheck.analysis.diff import diff_snapshots

    a, b = (import_texts([(n, n, (SMIQ / n).read_text("utf-8"))]) for n in ("q_410_gtx960m_2018.txt",
                                                                           "q_450_gtx780_prompt_2020.txt"))
    paths = {c.path for c in diff_snapshots(a, b).changes}
    assert "probes.gpu.data.driver_version" in paths and "probes.gpu.data.cuda_driver_version" in paths
    # Sections the pastes stop before (power, clocks, ...) are not in the report: never compared as changes.
    assert not [p for p in paths if ".power." in p or ".clocks." in p]
