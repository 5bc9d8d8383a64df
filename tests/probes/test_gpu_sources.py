"""The one NVML-against-nvidia-smi comparison (used by gpu_sources_agree.py and gpu_check.py).

Both sides here are the recorded RTX 3090 report (tests/data/nvidia/xml, source in SOURCES.md),
parsed by driftcheck; one copy is edited the way a reader bug or a clock change would differ.
On a GPU machine the live comparison runs too."""

from __future__ import annotations

import copy

import pytest

from driftcheck.nvidia.gather import NvmlUnavailable, read_local_nvml
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.probes.gpu_sources import SourcesUnavailable, compare_sources, disagreements
from tests.conftest import REPO_ROOT

XML = REPO_ROOT / "tests/data/nvidia/xml/rtx-3090_525.147.05_v12.xml"


def _nvml_works() -> bool:
    try:
        read_local_nvml()
    except NvmlUnavailable:
        return False
    return True


def test_identical_sources_agree_and_edits_are_sorted_into_stable_and_volatile() -> None:
    smi = parse_smi_xml(XML.read_text("utf-8"))["gpu"]
    assert disagreements("gpu", smi, copy.deepcopy(smi)) == []
    other = copy.deepcopy(smi)
    gpu = next(iter(other["gpus"].values()))
    gpu["vbios_version"] = "00.00.00.00.00"
    gpu["clocks"]["sm_mhz"] = (gpu["clocks"].get("sm_mhz") or 0) + 15
    rows = {row["path"].rsplit(".", 1)[-1]: row for row in disagreements("gpu", smi, other)}
    assert set(rows) == {"vbios_version", "sm_mhz"}
    assert rows["vbios_version"]["volatile"] is False and rows["sm_mhz"]["volatile"] is True
    assert rows["vbios_version"]["nvidia_smi"] == "00.00.00.00.00"


def test_nvml_only_violation_time_is_not_a_disagreement() -> None:
    smi = parse_smi_xml(XML.read_text("utf-8"))["gpu"]
    nvml = copy.deepcopy(smi)
    next(iter(nvml["gpus"].values()))["violation_time_us"] = {"power": 9840338777, "thermal": 0}
    assert disagreements("gpu", nvml, smi) == []


@pytest.mark.skipif(_nvml_works(), reason="NVML works here: the live comparison below runs instead")
def test_without_a_driver_the_comparison_says_why() -> None:
    with pytest.raises(SourcesUnavailable, match="NVML unavailable"):
        compare_sources()


@pytest.mark.skipif(not _nvml_works(), reason="NVML does not initialise here (no NVIDIA driver or pynvml)")
def test_live_sources_agree_on_every_stable_fact() -> None:
    found = compare_sources()
    assert found["gpus"] == found["gpus_smi"] >= 1
    assert [r for r in found["disagreements"] if not r["volatile"]] == []
