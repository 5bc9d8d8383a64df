"""The nvidia-smi table on Windows and WSL, and a table cut among its GPUs: read what is there, claim no more.

Values read off the files by hand.
"""

from __future__ import annotations

from driftcheck.reports.formats.nvidia_smi_table import parse
from tests.conftest import DATA

REPORTS = DATA / "reports"


def _gpu(name: str) -> tuple[dict, list[str], list[str]]:  # type: ignore[type-arg]
    parsed = parse((REPORTS / name).read_text("utf-8"))
    return parsed.probes["gpu"], parsed.complete, parsed.cut


def test_a_windows_row_is_read_with_its_driver_model_in_place_of_persistence() -> None:
    gpu, _, cut = _gpu("smi_04.txt")
    assert list(gpu["gpus"]) == ["00000000:0B:00.0"]
    assert gpu["gpus"]["00000000:0B:00.0"]["name"] == "NVIDIA GeForce ..."
    assert "persistence_mode" not in gpu["gpus"]["00000000:0B:00.0"]  # WDDM is no persistence setting
    assert gpu["driver_version"] == "526.47" and gpu["cuda_driver_version"] == "12.0"
    tcc, _, _ = _gpu("smi_06.txt")
    assert [g["name"] for g in tcc["gpus"].values()] == ["Tesla P4"]


def test_wsl_err_is_no_cuda_version() -> None:
    gpu, _, _ = _gpu("smi_05.txt")
    assert "cuda_driver_version" not in gpu and gpu["driver_version"] == "546.80"
    assert gpu["gpus"]["00000000:01:00.0"]["memory"] == {"used_mib": 816, "total_mib": 6144}


def test_only_a_table_that_reaches_its_processes_box_says_how_many_gpus() -> None:
    whole, complete, cut = _gpu("smi_01.txt")
    assert whole["gpu_count"] == 1 and "probes.gpu.data.gpus" in complete and cut == []
    for name in ("smi_02.txt", "smi_03.txt", "smi_04.txt", "smi_05.txt", "smi_06.txt"):
        gpu, complete, cut = _gpu(name)
        assert "gpu_count" not in gpu and "probes.gpu.data.gpus" not in complete and cut == ["probes.gpu.data.gpus"]
