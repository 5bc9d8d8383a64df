"""The nccl probe on recorded machines, and its parsers."""

from __future__ import annotations

from typing import Any

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.nccl import NcclProbe, parse_conf, preferred_library
from driftcheck.probes.redact import REDACTED_PATTERN, Redactor
from driftcheck.probes.runner import run_one
from tests.conftest import DATA
from tests.probes.facts_of import category_of, is_reading

HOSTS = DATA / "hosts"


def probe() -> NcclProbe:
    return NcclProbe(Redactor(b"test-secret"))


def nccl_data(name: str) -> dict[str, Any]:
    outcome = run_one(probe(), ReplayHost(HOSTS / name), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    return outcome.data


def test_recorded_vm_finds_the_wheel_library_and_no_infiniband() -> None:
    data = nccl_data("debian12-vm-docker")
    wheel_lib = "/opt/ml-env/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
    assert data["library"] == {"path": wheel_lib, "version": "2.30.7", "source": "wheel"}
    assert data["libraries"] == {wheel_lib: {"version": "2.30.7", "source": "wheel"}}
    # No /sys/class/infiniband on this machine: recorded as unreadable (null), the probe still succeeds.
    assert data["infiniband"] is None
    assert data["net"]["eth0"] == {"mtu": 1400, "speed_mbps": None, "operstate": "up"}
    assert data["net"]["lo"]["mtu"] == 65536
    assert data["env"] == {}
    assert data["conf_files"] == {}


def test_nccl_variable_is_seen() -> None:
    assert nccl_data("debian12-vm-docker-nccl-p2p-disable")["env"] == {"NCCL_P2P_DISABLE": "1"}


def test_infiniband_ports() -> None:
    data = nccl_data("debian12-vm-docker-infiniband")
    assert data["infiniband"] == {"mlx5_0": {"fw_ver": "28.39.1002", "ports": {"1": {
        "state": "ACTIVE", "phys_state": "LinkUp", "rate": "200 Gb/sec (4X HDR)", "link_layer": "InfiniBand",
        "counters": None}}}}  # that recording has no counters directory: unknown, not zero


# The error counters of a real ConnectX port (mlx5_1 port 1), as printed in leptonai/gpud pull request #943
# (`cat` of every file under /sys/class/infiniband/mlx5_1/ports/1/counters), and an iWARP port without a
# PMA as printed in prometheus/node_exporter issue #966 ("N/A (no PMA)").
GPUD_943 = {"symbol_error": "0", "link_error_recovery": "0", "link_downed": "255", "port_rcv_errors": "0",
            "port_rcv_remote_physical_errors": "0", "local_link_integrity_errors": "0",
            "excessive_buffer_overrun_errors": "15", "port_xmit_data": "205143497464492", "port_xmit_discards": "65535"}


def test_infiniband_error_counters_of_a_real_port(tmp_path: Any) -> None:
    from tests.nvidia.helpers import make_replay

    ib = "/sys/class/infiniband"
    files = {f"{ib}/mlx5_1/ports/1/counters/{name}": f"{value}\n".encode() for name, value in GPUD_943.items()}
    files |= {f"{ib}/mlx5_1/ports/1/state": b"4: ACTIVE\n", f"{ib}/mlx5_1/fw_ver": b"28.41.1000\n",
              f"{ib}/i40iw0/ports/1/counters/link_downed": b"N/A (no PMA)\n",
              f"{ib}/i40iw0/ports/1/state": b"4: ACTIVE\n"}
    dirs = {ib: ["i40iw0", "mlx5_1"], f"{ib}/mlx5_1/ports": ["1"], f"{ib}/i40iw0/ports": ["1"],
            f"{ib}/mlx5_1/ports/1/counters": sorted(GPUD_943), f"{ib}/i40iw0/ports/1/counters": ["link_downed"]}
    outcome = run_one(probe(), ReplayHost(make_replay(tmp_path / "rec", files=files, dirs=dirs)), ProbeOptions())
    assert outcome.status == "ok" and outcome.data is not None, outcome.error
    ports = outcome.data["infiniband"]
    assert ports["mlx5_1"]["ports"]["1"]["counters"] == {
        "symbol_error": 0, "link_error_recovery": 0, "link_downed": 255, "port_rcv_errors": 0,
        "port_rcv_remote_physical_errors": 0, "local_link_integrity_errors": 0, "excessive_buffer_overrun_errors": 15}
    assert ports["i40iw0"]["ports"]["1"]["counters"] == {"link_downed": None}  # no PMA: not readable, not zero
    assert is_reading(NcclProbe, "infiniband.mlx5_1.ports.1.counters.link_downed")


def test_nothing_to_read_is_unavailable_not_error() -> None:
    outcome = run_one(probe(), ReplayHost(HOSTS / "bare-no-proc-sys"), ProbeOptions())
    assert outcome.status == "unavailable"


def test_conf_parsing_and_redaction(tmp_path: Any, monkeypatch: Any) -> None:
    assert parse_conf("# tuned for IB\nNCCL_IB_HCA=mlx5_0,mlx5_1\n\nNCCL_ALGO = Ring  # why\nbad line\n") == {
        "NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_ALGO": "Ring"}
    (tmp_path / ".nccl.conf").write_text("NCCL_NET_GDR_LEVEL=PHB\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NCCL_IB_AUTH_TOKEN", "s3cret-value")
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    outcome = run_one(probe(), LocalHost(), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    data = outcome.data or {}
    assert data["conf_files"]["~/.nccl.conf"] == {"NCCL_NET_GDR_LEVEL": "PHB"}
    assert data["env"]["NCCL_DEBUG"] == "INFO"
    assert REDACTED_PATTERN.fullmatch(data["env"]["NCCL_IB_AUTH_TOKEN"])


def test_preferred_library_order() -> None:
    libraries = {"/usr/lib/libnccl.so.2": {"version": "2.18.1", "source": "ldconfig"},
                 "/venv/nvidia/nccl/lib/libnccl.so.2": {"version": "2.21.5", "source": "wheel"}}
    assert preferred_library(libraries) == {"path": "/venv/nvidia/nccl/lib/libnccl.so.2", "version": "2.21.5",
                                            "source": "wheel"}
    assert preferred_library({}) is None


def test_categories() -> None:
    assert category_of(NcclProbe, "env.NCCL_P2P_DISABLE") == "nccl_env"
    assert category_of(NcclProbe, "infiniband.mlx5_0") == "hardware_change"
    assert category_of(NcclProbe, "infiniband") == "hardware_change"
    assert category_of(NcclProbe, "net.eth0") == "hardware_change"
    assert category_of(NcclProbe, 'net["eth0.100"]') == "hardware_change"
    assert category_of(NcclProbe, "infiniband.mlx5_0.ports.1.state") == "nccl_env"
    assert category_of(NcclProbe, "library.version") == "package_version"
    assert is_reading(NcclProbe, "net.veth12ab")
    assert not is_reading(NcclProbe, "net.eth0")
