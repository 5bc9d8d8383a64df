"""The gpu probe (and pcie beside it) on replayed machines, on this machine, and their categories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.nvidia.gather import SMI_XML_ARGV
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.runner import run_one, run_probes
from tests.nvidia.helpers import make_replay, nvidia_text
from tests.probes.facts_of import category_of, is_reading

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
    assert "nvml" in probes["gpu"]["error"]["message"].lower()


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
    assert category_of(probe, path) == category
    assert is_reading(probe, path) is volatile
