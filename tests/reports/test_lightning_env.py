"""PyTorch Lightning's `collect_env_details.py`: real pastes (SOURCES.md, lightning/).

Every expected value below was read off the file by hand. Each stored paste ends inside `* Packages:`:
the packages before the last line are read, the last line is not, and the package list is said to be cut.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.lightning_env import parse
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA

LIGHTNING = DATA / "reports" / "lightning"
PACKAGES = "probes.packages.data.packages"

# file: (torch, torch's CUDA or None, CUDA available, GPU names, packages read, pytorch-lightning, last line)
EXPECTED: dict[str, tuple[str, str | None, bool, list[str], int, str, str]] = {
    "env_2_5_20682": ("2.6.0+cu118", "11.8", True, ["NVIDIA GeForce RTX 4090"] * 4, 28, "2.5.1",
                      "        - backports.tarfile:"),
    "env_1_9_16816": ("1.13.1", "11.7", True, ["Quadro RTX 5000"], 40, "1.9.2", "\t- cyc"),
    "env_1_7_15139": ("1.12.1", None, False, [], 34, "1.7.7", "\t- cachetools:"),
}


def _read(name: str) -> str:
    return (LIGHTNING / f"{name}.txt").read_text("utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_paste_reads_torch_gpus_and_packages_and_is_cut_inside_packages(name: str) -> None:
    torch, cuda, available, gpus, count, lightning, last = EXPECTED[name]
    text = _read(name)
    assert (found := detect(text)) is not None and found.name == "lightning-env"
    parsed = parse(text)
    assert parsed.probes["torch"].get("version") == torch and parsed.probes["torch"].get("cuda_version") == cuda
    assert parsed.probes["torch"]["cuda_available"] is available
    assert parsed.probes["torch"]["device_count"] == len(gpus)
    assert [gpu["name"] for gpu in parsed.probes.get("gpu", {}).get("gpus", {}).values()] == gpus
    packages = parsed.probes["packages"]["packages"]
    assert len(packages) == count and packages["pytorch-lightning"]["version"] == lightning
    assert parsed.cut == [PACKAGES] and parsed.unclaimed == [last]


def test_the_package_before_the_cut_line_is_read_and_the_cut_one_is_not() -> None:
    packages = parse(_read("env_1_9_16816")).probes["packages"]["packages"]
    assert packages["cryptography"]["version"] == "38.0.4" and "cyc" not in packages
    host = import_texts([("16816", "16816", _read("env_1_9_16816"))]).document["host"]
    assert host["cut"] == [PACKAGES] and host["complete"] == ["probes.gpu.data.gpus"]


def test_gpu_none_is_torch_counting_no_device() -> None:
    parsed = parse(_read("env_1_7_15139"))
    assert "gpu" not in parsed.probes and parsed.probes["torch"]["device_count"] == 0


def test_in_an_issue_body_the_report_is_found_after_prose() -> None:
    body = "### Environment\n\n<details>\n<summary>Current environment</summary>\n\n" + _read("env_2_5_20682")
    host = import_texts([("issue", "issue", body)]).document["host"]
    assert [source["format"] for source in host["sources"]] == ["Lightning collect_env_details.py"]
