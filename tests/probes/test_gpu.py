"""The gpu and pcie probes on replayed machines (nvidia-smi through the Host), and on this machine."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.host import LocalHost
from driftcheck.nvidia.gather import SMI_TOPO_ARGV, SMI_XML_ARGV
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.runner import run_one, run_probes
from driftcheck.recording import ReplayHost
from tests.nvidia.helpers import make_replay, nvidia_text

A10G = "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94"
NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
             "latest NVIDIA driver is installed and running.\n")


def test_gpu_probe_reads_nvidia_smi_through_a_replayed_host(tmp_path: Path) -> None:
    host = ReplayHost(make_replay(tmp_path / "rec",
                                  {SMI_XML_ARGV: {"stdout": nvidia_text("xml/a10g_515.105.01_v11.xml")}}))
    outcome = run_one(GpuProbe(), host, ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    assert outcome.data["source"] == "nvidia-smi-xml"
    gpu = outcome.data["gpus"][A10G]
    assert (gpu["name"], gpu["power"]["limit_w"], gpu["clock_event_reasons"]) == ("NVIDIA A10G", 300.0, ["idle"])


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


@pytest.mark.parametrize("commands", [{}, {SMI_XML_ARGV: {"returncode": 9, "stdout": NO_DRIVER}},
                                      {SMI_XML_ARGV: {"returncode": 6, "stdout": "No devices were found\n"}}],
                         ids=["no-nvidia-smi", "no-driver", "no-devices"])
def test_no_driver_or_gpu_is_unavailable_with_the_reason(tmp_path: Path,
                                                          commands: dict[tuple[str, ...], dict[str, object]]) -> None:
    host = ReplayHost(make_replay(tmp_path / "rec", commands))
    outcomes = run_probes(host, [GpuProbe(), PcieProbe()])
    for name in ("gpu", "pcie"):
        assert outcomes[name].status == "unavailable"
        assert outcomes[name].error is not None
    message = outcomes["gpu"].error["message"] if outcomes["gpu"].error else ""
    if commands:
        assert "failed (exit" in message and ("NVIDIA driver" in message or "No devices" in message)
    else:
        assert "nvidia-smi not found" in message


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
    from driftcheck.nvidia.sysfs import acs_control
    config = bytearray(0x200)
    config[0x100:0x104] = (0x0001 | 1 << 16 | 0x140 << 20).to_bytes(4, "little")  # AER, next at 0x140
    config[0x140:0x144] = (0x000D | 1 << 16).to_bytes(4, "little")  # ACS, last
    config[0x146:0x148] = (0x001D).to_bytes(2, "little")
    assert acs_control(bytes(config)) == "0x001d"
    assert acs_control(bytes(64)) is None  # unprivileged read: no extended space


def test_this_machine_records_gpu_and_pcie_unavailable_with_a_reason() -> None:
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA driver")
    outcomes = run_probes(LocalHost(), [GpuProbe(), PcieProbe()])
    for name in ("gpu", "pcie"):
        assert outcomes[name].status == "unavailable", outcomes[name]
        assert outcomes[name].error is not None and "nvidia-smi" in outcomes[name].error["message"]


def test_snapshot_command_records_them_unavailable(cli_process: Callable[..., object], tmp_path: Path) -> None:
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA driver")
    out = tmp_path / "snap.json"
    result = cli_process("snapshot", "--probe", "gpu", "--probe", "pcie", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    probes = json.loads(out.read_text("utf-8"))["probes"]
    assert {name: probes[name]["status"] for name in ("gpu", "pcie")} == {"gpu": "unavailable",
                                                                         "pcie": "unavailable"}
    assert "NVML" in probes["gpu"]["error"]["message"]


@pytest.mark.parametrize(("probe", "path", "category", "volatile"), [
    (GpuProbe, f"gpus.{A10G}.power.limit_w", "gpu_clock_power", False),
    (GpuProbe, f"gpus.{A10G}.power.draw_w", "gpu_clock_power", True),
    (GpuProbe, 'gpus["00000000:01:00.0"].clock_event_reasons', "gpu_clock_power", False),
    (GpuProbe, f"gpus.{A10G}.temperature.gpu_c", "thermal", True),
    (GpuProbe, f"gpus.{A10G}.temperature.slowdown_c", "thermal", False),
    (GpuProbe, f"gpus.{A10G}.persistence_mode", "mig_ecc_persistence", False),
    (GpuProbe, f"gpus.{A10G}.mig.mode_current", "mig_ecc_persistence", False),
    (GpuProbe, f"gpus.{A10G}.processes.4242", "gpu_contention", False),
    (GpuProbe, f"gpus.{A10G}.memory.used_mib", "gpu_contention", True),
    (GpuProbe, f"gpus.{A10G}.utilization.gpu_pct", "gpu_contention", True),
    (GpuProbe, f"gpus.{A10G}.performance_state", "gpu_clock_power", True),
    (GpuProbe, "driver_version", "driver_version", False),
    (GpuProbe, "cuda_driver_version", "cuda_version", False),
    (GpuProbe, f"gpus.{A10G}", "hardware_change", False),
    (GpuProbe, f"gpus.{A10G}.vbios_version", "hardware_change", False),
    (PcieProbe, f"gpus.{A10G}.link.width_current", "pcie_link", False),
    (PcieProbe, f"gpus.{A10G}.link.gen_current", "pcie_link", True),
    (PcieProbe, f"gpus.{A10G}.numa_node", "numa", False),
    (PcieProbe, 'topology.pairs["GPU0~GPU1"]', "p2p_topology", False),
    (PcieProbe, 'p2p["GPU0~GPU1"].read', "p2p_topology", False),
    (PcieProbe, 'sysfs["0000:17:00.0"].current_link_width', "pcie_link", False),
    (PcieProbe, 'sysfs["0000:17:00.0"].current_link_speed', "pcie_link", True),
])
def test_categories_and_volatility(probe: type[GpuProbe] | type[PcieProbe], path: str, category: str,
                                   volatile: bool) -> None:
    assert probe.category_of(path) == category
    assert probe.is_volatile(path) is volatile
