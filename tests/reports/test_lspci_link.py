"""`lspci -vv` pastes: a display device's LnkCap/LnkSta as the kernel's sysfs spells them (`32.0 GT/s PCIe`,
width 16) under the bus id the kernel uses; link lines of no named device, or a device cut before its link
lines, give no fact. Values read off the files by hand.
"""

from __future__ import annotations

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.reports.formats import detect
from driftcheck.reports.formats.lspci_link import parse
from driftcheck.reports.importer import ImportFormatError, import_texts, parse_text
from tests.conftest import DATA

LSPCI = DATA / "reports" / "lspci"


def _read(name: str) -> str:
    return (LSPCI / name).read_text("utf-8")


def test_a_grepped_link_of_a_device_named_by_s_and_by_its_header() -> None:
    text = _read("amd_9070xt_s_grep.txt")
    assert (found := detect(text)) is not None and found.name == "lspci-link"
    parsed = parse(text)
    assert parsed.probes["pcie"] == {"source": "lspci", "sysfs": {"0000:2f:00.0": {
        "max_link_speed": "32.0 GT/s PCIe", "max_link_width": 16,
        "current_link_speed": "32.0 GT/s PCIe", "current_link_width": 16}}}
    assert parsed.fields["0000:2f:00.0 device"].startswith("VGA compatible controller: Advanced Micro Devices")
    assert parsed.unclaimed[1:] == ["I checked this commands:", "And", "So I assume the gpu is running at 32GT/s x16"]


def test_a_status_line_alone_gives_the_current_link_only() -> None:
    parsed = parse(_read("amd_7800xt_sta_only.txt"))
    # The device comes from the user's `lspci -s 0c:00.0 -vvv` line above the fence; LnkCap2 is no LnkCap.
    assert parsed.probes["pcie"]["sysfs"] == {"0000:0c:00.0": {"current_link_speed": "16.0 GT/s PCIe",
                                                                "current_link_width": 16}}
    assert any(line.startswith("LnkCap2:") for line in parsed.unclaimed)


@pytest.mark.parametrize(("name", "reason"), [
    ("riser_4090_no_device.txt", "name no device"),
    ("a100_cut_before_link.txt", "ends before its display device's LnkCap/LnkSta"),
])
def test_link_lines_of_no_named_device_or_a_device_without_them_are_refused(name: str, reason: str) -> None:
    text = _read(name)
    assert (found := detect(text)) is not None and found.name == "lspci-link"
    with pytest.raises(ImportFormatError, match=reason):
        parse_text(text, name)


def test_two_pastes_of_different_devices_compare_nothing_and_say_so() -> None:
    a, b = (import_texts([(name, name, _read(name))]) for name in ("amd_7800xt_sta_only.txt", "amd_9070xt_s_grep.txt"))
    diff = diff_snapshots(a, b)
    # Two bus ids, each in one paste only: a grep names the devices it shows, not all, so neither is "gone".
    assert diff.changes == []
    assert diff.not_in_report == ['probes.pcie.data.sysfs["0000:0c:00.0"]', 'probes.pcie.data.sysfs["0000:2f:00.0"]']


def test_beside_a_gpu_description_the_links_are_kept() -> None:
    """A mechanism test of two real pastes (not of one machine): nvidia-smi's pcie has no sysfs, lspci's is kept."""
    smi, lspci = DATA / "reports" / "smi_03.txt", LSPCI / "amd_9070xt_s_grep.txt"
    document = import_texts([(str(p), p.name, p.read_text("utf-8")) for p in (smi, lspci)]).document
    pcie = document["probes"]["pcie"]["data"]
    assert pcie["sysfs"]["0000:2f:00.0"]["max_link_width"] == 16
    assert "00000000:2A:00.0" in pcie["gpus"]
