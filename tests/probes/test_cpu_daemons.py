"""The cpu and daemons probes and the cgroup throttle counters, on a real recording of this VM
(tests/data/hosts/debian12-vm-idle-irq, see its SOURCE) and its edited copies; and `explain` ranking the
one edited fact first, with its fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.hosts import ReplayHost
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.cpu import CpuProbe
from driftcheck.probes.daemons import DaemonsProbe, parse_services
from driftcheck.probes.runner import run_one
from driftcheck.probes.sysread import RawView
from driftcheck.probes.system import SystemProbe, throttling
from tests.conftest import DATA, CliResult

HOSTS = DATA / "hosts"
BASE = "debian12-vm-idle-irq"


def data_of(probe: Probe, name: str) -> dict[str, Any]:
    outcome = run_one(probe, ReplayHost(HOSTS / name), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    return outcome.data


def test_recorded_idle_states_aspm_and_nic_irqs() -> None:
    data = data_of(CpuProbe(), BASE)
    assert data["idle"] == {"driver": "haltpoll", "governor": "haltpoll", "states": {
        "POLL": {"index": 0, "latency_us": 0, "cpus": 2, "disabled_cpus": 0},
        "haltpoll idle": {"index": 1, "latency_us": 1, "cpus": 2, "disabled_cpus": 0}}}
    assert data["max_cstate"] == {"intel_idle": 9, "processor": 8}
    assert data["pcie_aspm_policy"] == "default"
    # The virtio NIC's three MSI-X IRQs; the balloon, block and console devices are not GPUs or NICs.
    assert data["irq_affinity"] == {"0000:00:03.0": {"kind": "nic", "irqs": 3, "cpus": {"0-1": 3}}}
    assert data["devfreq"] is None  # no /sys/class/devfreq on this VM


def test_disabled_state_is_counted_per_state_not_per_cpu() -> None:
    states = data_of(CpuProbe(), f"{BASE}-cstate-disabled")["idle"]["states"]
    assert states["haltpoll idle"]["disabled_cpus"] == 2
    assert states["POLL"]["disabled_cpus"] == 0


def test_denied_and_absent_idle_files_differ() -> None:
    base = "/sys/devices/system/cpu/cpu0/cpuidle/state0"
    raw = {"files": {f"{base}/name": "C6\n", f"{base}/latency": "133\n", f"{base}/disable": None},
           "dirs": {"/sys/devices/system/cpu": ["cpu0"], "/sys/devices/system/cpu/cpu0/cpuidle": ["state0"]},
           "denied": [f"{base}/disable", "/sys/module/pcie_aspm/parameters/policy"]}
    data = CpuProbe().parse(raw)
    assert data["idle"]["states"]["C6"] == {"index": 0, "latency_us": 133, "cpus": 1, "disabled_cpus": "denied"}
    assert data["pcie_aspm_policy"] == "denied"
    assert data["max_cstate"] == {"intel_idle": None, "processor": None}
    assert data["irq_affinity"] is None


def test_no_daemons_on_the_recorded_vm() -> None:
    assert data_of(DaemonsProbe(), BASE) == {"running": {}, "mps": {
        "pipe_directory": "/tmp/nvidia-mps", "control_pipe": False, "active_thread_percentage": None,
        "daemon_environ": None}, "services": None}  # services: systemd is not init in this container


def test_mps_daemon_its_pipe_and_thread_cap() -> None:
    data = data_of(DaemonsProbe(), f"{BASE}-mps")
    assert data["running"] == {"nvidia-cuda-mps-control": 1}
    assert data["mps"] == {"pipe_directory": "/tmp/nvidia-mps", "control_pipe": True,
                           "active_thread_percentage": "50", "daemon_environ": "read"}


def test_nvidia_daemons_are_told_by_their_cut_comm_names() -> None:
    assert data_of(DaemonsProbe(), f"{BASE}-nvidia-daemons")["running"] == {"nvidia-persistenced": 1,
                                                                            "nv-fabricmanager": 1}


def test_services_need_systemd_as_init() -> None:
    assert parse_services(None) is None
    assert parse_services({"error": "FileNotFoundError"}) is None
    # `systemctl is-active a b` prints one state per unit, in order, and exits 3 when one is not active.
    assert parse_services({"stdout": "active\ninactive\n", "returncode": 3}) == {
        "nvidia-persistenced": "active", "nvidia-fabricmanager": "inactive"}
    assert parse_services({"stdout": "active\n", "returncode": 3}) is None


def test_devfreq_governors_and_denied() -> None:
    base = "/sys/class/devfreq"
    raw = {"files": {f"{base}/17000000.gv11b/governor": "nvhost_podgov\n", f"{base}/mc/governor": None},
           "dirs": {base: ["mc", "17000000.gv11b"]}, "denied": [f"{base}/mc/governor"]}
    assert CpuProbe().parse(raw)["devfreq"] == {"17000000.gv11b": {"governor": "nvhost_podgov"},
                                                 "mc": {"governor": "denied"}}


def test_irqbalance_is_found_by_its_comm() -> None:
    assert data_of(DaemonsProbe(), f"{BASE}-irqbalance")["running"] == {"irqbalance": 1}


@pytest.mark.parametrize(("name", "expected"), [
    (BASE, {"nr_periods": 0, "nr_throttled": 0, "throttled_usec": 0, "throttled_pct": None}),
    ("debian12-vm-quota-throttled", {"nr_periods": 73, "nr_throttled": 24, "throttled_usec": 494952,
                                     "throttled_pct": 32.88}),
])
def test_cgroup_v1_throttle_counters(name: str, expected: dict[str, Any]) -> None:
    assert data_of(SystemProbe(), name)["cgroup"]["cpu_stat"] == expected


def test_v2_throttle_counters_from_the_level_with_periods() -> None:
    leaf, parent = "/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a"
    view = RawView({"files": {
        f"{leaf}/cpu.stat": "usage_usec 10\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
        f"{parent}/cpu.stat": "usage_usec 99\nnr_periods 200\nnr_throttled 50\nthrottled_usec 7000\n"}})
    assert throttling(view, [leaf, parent, "/sys/fs/cgroup"]) == {
        "nr_periods": 200, "nr_throttled": 50, "throttled_usec": 7000, "throttled_pct": 25.0}
    denied = RawView({"files": {f"{leaf}/cpu.stat": None}, "denied": [f"{leaf}/cpu.stat"]})
    assert throttling(denied, [leaf]) == "denied"


def _replayed(cli: Callable[..., CliResult], tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.json"
    done = cli("snapshot", "--replay", str(HOSTS / name), "--no-store", "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize(("a", "b", "rule_title", "fix"), [
    (BASE, f"{BASE}-mps", "a CUDA MPS control daemon now runs", "echo quit | nvidia-cuda-mps-control"),
    (BASE, f"{BASE}-cstate-disabled", "CPU idle state haltpoll idle disabled on 2 CPUs (was 0)",
     "echo 0 | sudo tee $d/disable"),
    (BASE, f"{BASE}-irqbalance", "irqbalance now runs", "sudo systemctl stop irqbalance"),
    (f"{BASE}-nvidia-daemons", BASE, "NVIDIA Fabric Manager no longer runs",
     "sudo systemctl start nvidia-fabricmanager"),
])
def test_explain_ranks_the_edited_fact_first(cli: Callable[..., CliResult], tmp_path: Path, a: str, b: str,
                                             rule_title: str, fix: str) -> None:
    done = cli("explain", str(_replayed(cli, tmp_path, a)), str(_replayed(cli, tmp_path, b)), "--format", "json")
    report = json.loads(done.stdout)
    first = report["explanations"][0]
    assert rule_title in first["title"]
    assert fix in first["fix"]


def test_a_quota_that_throttled_is_told_as_context_never_ranked(cli: Callable[..., CliResult],
                                                               tmp_path: Path) -> None:
    # The throttle counters are readings: never a cause, whatever rule names them (they ranked first before).
    a, b = _replayed(cli, tmp_path, "debian12-vm-quota"), _replayed(cli, tmp_path, "debian12-vm-quota-throttled")
    done = cli("explain", str(a), str(b), "--format", "json")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["explanations"] == []
    note = next(n for n in report["notes"] if n["rule"] == "cgroup-cpu-throttled")
    assert "the container's CPU quota throttled 32.88 % of its periods (was 0 %)" in note["title"]
    assert "docker update --cpus" in note["fix"]
