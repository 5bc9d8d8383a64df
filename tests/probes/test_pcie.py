"""The pcie probe on replayed machines: nvidia-smi XML plus topology, unreadable matrices, sysfs alone."""

from __future__ import annotations

from pathlib import Path

from driftcheck.hosts import ReplayHost
from driftcheck.nvidia.gather import SMI_TOPO_ARGV, SMI_XML_ARGV
from driftcheck.nvidia.sysfs import acs_control
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.runner import run_one
from tests.nvidia.helpers import make_replay, nvidia_text

A10G = "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94"


def test_pcie_probe_combines_xml_and_topology(tmp_path: Path) -> None:
    host = ReplayHost(make_replay(tmp_path / "rec",
                                  {SMI_XML_ARGV: {"stdout": nvidia_text("xml/rtx-2070-x2_590.44.01_v13.xml")},
                                  SMI_TOPO_ARGV: {"stdout": nvidia_text(
                                      "topo/h100-nvl-x2_550.127.05_nv12_nic1_sglang-2874.txt")}},
                                 dirs={"/sys/bus/pci/devices": []}))
    outcome = run_one(PcieProbe(), host, ProbeOptions())
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data is not None and data["source"] == "nvidia-smi"
    second = data["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789cd"]
    assert second["link"] == {"gen_current": 1, "gen_max": 3, "width_current": 8, "width_max": 16}
    assert (second["cpu_affinity"], second["numa_node"]) == ("40-79", 1)
    assert data["topology"]["pairs"]["GPU0~GPU1"] == "NV12"
    assert data["sysfs"] == {}


def test_unreadable_topology_keeps_the_links(tmp_path: Path) -> None:
    host = ReplayHost(make_replay(tmp_path / "rec",
                                  {SMI_XML_ARGV: {"stdout": nvidia_text("xml/a10g_515.105.01_v11.xml")},
                                  SMI_TOPO_ARGV: {"returncode": 255, "stdout": nvidia_text(
                                      "topo/rtx-2080-super-x1_591.86_windows_error.txt")}}))
    outcome = run_one(PcieProbe(), host, ProbeOptions())
    assert outcome.status == "ok" and outcome.data is not None
    assert outcome.data["topology"] is None
    assert outcome.data["gpus"][A10G]["link"]["width_current"] == 8


def test_pcie_from_sysfs_alone_when_the_driver_is_missing(tmp_path: Path) -> None:
    gpu = "/sys/bus/pci/devices/0000:17:00.0"
    files = {f"{gpu}/vendor": b"0x10de\n", f"{gpu}/class": b"0x030200\n",
             f"{gpu}/current_link_speed": b"2.5 GT/s PCIe\n", f"{gpu}/current_link_width": b"8\n",
             f"{gpu}/max_link_speed": b"32.0 GT/s PCIe\n", f"{gpu}/max_link_width": b"16\n",
             "/sys/bus/pci/devices/0000:00:00.0/vendor": b"0x8086\n"}
    host = ReplayHost(make_replay(tmp_path / "rec", {}, files=files,
                                  dirs={"/sys/bus/pci/devices": ["0000:00:00.0", "0000:17:00.0"]}))
    outcome = run_one(PcieProbe(), host, ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data == {"source": "sysfs", "gpus": {}, "topology": None, "p2p": None,
                            "sysfs": {"0000:17:00.0": {"current_link_speed": "2.5 GT/s PCIe",
                                                       "current_link_width": 8, "max_link_speed": "32.0 GT/s PCIe",
                                                       "max_link_width": 16, "acs_ctl": None}}}


def test_acs_control_read_from_extended_capabilities() -> None:
    config = bytearray(0x200)
    config[0x100:0x104] = (0x0001 | 1 << 16 | 0x140 << 20).to_bytes(4, "little")  # AER, next at 0x140
    config[0x140:0x144] = (0x000D | 1 << 16).to_bytes(4, "little")  # ACS, last
    config[0x146:0x148] = (0x001D).to_bytes(2, "little")
    assert acs_control(bytes(config)) == "0x001d"
    assert acs_control(bytes(64)) is None  # unprivileged read: no extended space
