"""The gpu and pcie probes say at once that a machine without an NVIDIA driver has no GPU to read.

No /proc/driver/nvidia and no /dev/nvidia* (and, for pcie, no NVIDIA display device in sysfs): no isolated
child is started, NVML is not loaded and nvidia-smi is not spawned. Where the driver shows, or the host is
not this machine (SSH, a replay), the probes go on as before and NVML or nvidia-smi answers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes import runner
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.pcie import PcieProbe
from tests.nvidia.helpers import make_replay


def _has_driver() -> bool:
    return Path("/proc/driver/nvidia").exists() or any(n.startswith("nvidia") for n in os.listdir("/dev"))


PROBES = [GpuProbe, PcieProbe]


@pytest.mark.skipif(_has_driver(), reason="this machine has an NVIDIA driver")
@pytest.mark.parametrize("probe", PROBES)
def test_this_machine_without_a_driver_is_unavailable_before_any_child_or_nvml(
        probe: type[Probe], monkeypatch: pytest.MonkeyPatch) -> None:
    def no_child(*args: object) -> None:
        raise AssertionError("an isolated child was started")

    monkeypatch.setattr(runner, "_gather_isolated", no_child)
    monkeypatch.setattr(probe, "gather", no_child)
    outcome = runner.run_one(probe(), LocalHost(), ProbeOptions())
    assert outcome.status == "unavailable"
    assert outcome.error is not None and "no NVIDIA driver" in outcome.error["message"]
    assert "/proc/driver/nvidia" in outcome.error["message"] and "/dev/nvidia*" in outcome.error["message"]


class _ThisMachineWith(LocalHost):
    """This machine as the probe sees it, with the named NVIDIA entries added (none exist here)."""

    def __init__(self, dev: tuple[str, ...] = (), proc_driver: bool = False) -> None:
        super().__init__()
        self.dev, self.proc_driver = dev, proc_driver

    def list_dir(self, path: str) -> list[str]:
        if path == "/dev":
            return sorted([*super().list_dir(path), *self.dev])
        if path == "/proc/driver/nvidia" and self.proc_driver:
            return ["gpus", "params", "version"]
        return super().list_dir(path)


@pytest.mark.parametrize("host", [_ThisMachineWith(dev=("nvidiactl", "nvidia0")), _ThisMachineWith(proc_driver=True),
                                  _ThisMachineWith(dev=("nvidia-uvm",))], ids=["dev-nodes", "proc", "uvm-only"])
@pytest.mark.parametrize("probe", PROBES)
def test_any_sign_of_the_driver_lets_nvml_and_nvidia_smi_answer(host: LocalHost, probe: type[Probe]) -> None:
    assert probe().unavailable_on(host) is None


@pytest.mark.parametrize("probe", PROBES)
def test_a_host_that_is_not_this_machine_answers_for_itself(tmp_path: Path, probe: type[Probe]) -> None:
    host = ReplayHost(make_replay(tmp_path / "rec", {}))  # a recording of a machine without nvidia-smi
    assert probe().unavailable_on(host) is None
    outcome = runner.run_one(probe(), host, ProbeOptions())
    assert outcome.status == "unavailable" and "nvidia-smi not found" in str(outcome.error)


class _ThisMachineWithout(LocalHost):
    """This machine as the probe sees it with every NVIDIA node and the driver's /proc directory hidden."""

    def read_bytes(self, path: str) -> bytes:
        if path.startswith("/proc/driver/nvidia"):
            raise FileNotFoundError(path)
        return super().read_bytes(path)

    def list_dir(self, path: str) -> list[str]:
        if path.startswith("/proc/driver/nvidia"):
            raise FileNotFoundError(path)
        return [name for name in super().list_dir(path) if not (path == "/dev" and name.startswith("nvidia"))]


NULL = Path(__file__).resolve().parent.parent / "data" / "null"


@pytest.mark.parametrize("sides", ["B", "AB"])
def test_snapshots_without_a_driver_diff_quiet_whichever_way_it_was_found(sides: str) -> None:
    """A live pair of the GPU-less build VM (taken when NVML and nvidia-smi were asked, and said so), with the
    gpu and pcie outcomes of the driver check put in B, or in both: nothing changed, so nothing is reported."""
    from driftcheck.analysis.diff import diff_snapshots
    from driftcheck.analysis.explain import explain
    from driftcheck.analysis.gate import check_against
    from driftcheck.snapshot.model import Snapshot, read_snapshot_file

    outcome = runner.run_one(GpuProbe(), _ThisMachineWithout(), ProbeOptions())
    assert outcome.status == "unavailable" and "NVML and nvidia-smi not tried" in outcome.error["message"]  # type: ignore[index]
    pair = NULL / "minutes-apart-3min"
    documents = [read_snapshot_file(pair / side).document for side in ("a.json", "b.json")]
    assert "NVML did not initialise" in documents[0]["probes"]["gpu"]["error"]["message"]  # the old way
    for index, side in enumerate("AB"):
        if side in sides:
            documents[index]["probes"]["gpu"] = documents[index]["probes"]["pcie"] = outcome.to_json()
    a, b = (Snapshot(document, source=f"{side}.json") for side, document in zip("AB", documents, strict=True))
    differences = diff_snapshots(a, b)
    gpu_changes = [c.path for c in differences.changes if c.path.startswith(("probes.gpu", "probes.pcie"))]
    assert gpu_changes == []
    assert explain(differences).explanations == []
    assert not check_against(a, b).drift
