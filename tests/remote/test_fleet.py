"""`driftcheck fleet` over real sshd servers: one of three has NCCL_P2P_DISABLE=1 in its sessions."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.store.snapshots import Store
from tests.conftest import CliResult
from tests.remote.sshd import Sshd, needs_sshd

pytestmark = [needs_sshd, pytest.mark.slow]

PROBES = ("--probe", "env", "--probe", "nccl", "--probe", "system", "--probe", "python")


@pytest.fixture
def fleet_of_three(sshd_factory: Callable[..., Sshd], client_key: Path,
                   ssh_home: Callable[..., Path]) -> dict[str, Sshd]:
    servers = {"node1": sshd_factory("node1"), "node2": sshd_factory("node2", {"NCCL_P2P_DISABLE": "1"}),
               "node3": sshd_factory("node3")}
    ssh_home(client_key, servers)
    return servers


def test_the_odd_host_out_is_named_with_its_variable_in_text(fleet_of_three: dict[str, Sshd],
                                                             cli: Callable[..., CliResult]) -> None:
    result = cli("fleet", "node[1-3]", *PROBES)
    assert result.returncode == 1, result.stdout + result.stderr
    outlier_lines = [line for line in result.stdout.splitlines() if "NCCL_P2P_DISABLE" in line and "node2:" in line]
    assert outlier_lines, result.stdout
    assert "NCCL_P2P_DISABLE = 1 (2 of 3 hosts: unset)" in outlier_lines[0]
    assert "outliers: node2" in result.stdout
    assert "node1:" not in result.stdout and "node3:" not in result.stdout
    assert len(Store().entries()) == 3


def test_the_odd_host_out_is_named_with_its_variable_in_json(fleet_of_three: dict[str, Sshd], tmp_path: Path,
                                                             cli: Callable[..., CliResult]) -> None:
    hosts_file = tmp_path / "hosts"
    hosts_file.write_text("# the test fleet\nnode1 node2\nnode3\n")
    result = cli("fleet", "--hosts-file", str(hosts_file), "--format", "json", "--no-store", *PROBES)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["outlier_hosts"] == ["node2"]
    assert sorted(report["snapshots"]) == ["node1", "node2", "node3"]
    # Taken over SSH by this process: signed by the user, per host.
    assert {host: s["state"] for host, s in report["signers"].items()} == dict.fromkeys(report["snapshots"], "you")
    finding = next(f for f in report["findings"] if f["path"].endswith("vars.NCCL_P2P_DISABLE"))
    assert finding["majority"] == {"value": None, "present": False, "hosts": 2, "of": 3}
    assert [(o["host"], o["value"]) for o in finding["outliers"]] == [("node2", "1")]
    assert finding["category"] == "nccl_env"
    assert finding["outliers"][0]["fix"]
    # Ranked first: nothing else differs as much as the NCCL variable.
    assert report["findings"][0]["category"] == "nccl_env"
    assert Store().entries() == []


def test_a_uniform_fleet_exits_0(sshd_factory: Callable[..., Sshd], client_key: Path,
                                 ssh_home: Callable[..., Path], cli: Callable[..., CliResult]) -> None:
    ssh_home(client_key, {"a": sshd_factory("a"), "b": sshd_factory("b")})
    result = cli("fleet", "a", "b", "--probe", "env", "--probe", "python", "--format", "markdown")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Uniform" in result.stdout


def test_a_host_that_fails_is_reported_and_the_rest_compared(
        sshd_factory: Callable[..., Sshd], client_key: Path, ssh_home: Callable[..., Path],
        cli: Callable[..., CliResult]) -> None:
    known, unknown = sshd_factory("known"), sshd_factory("unknown")
    home = ssh_home(client_key, {"known": known, "unknown": unknown})
    (home / ".ssh" / "known_hosts").write_text(known.known_hosts_line())
    result = cli("fleet", "known", "unknown", "--probe", "env", "--format", "json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert list(report["snapshots"]) == ["known"]
    assert "unknown host key" in report["failures"]["unknown"] and "SHA256:" in report["failures"]["unknown"]
    assert (home / ".ssh" / "known_hosts").read_text() == known.known_hosts_line()


def test_against_a_baseline_every_host_is_compared_with_it(fleet_of_three: dict[str, Sshd],
                                                           cli: Callable[..., CliResult]) -> None:
    first = cli("snapshot", "--host", "node2", *PROBES, "-q")
    assert first.returncode == 0, first.stderr
    assert cli("baseline", "save", "golden", first.stdout.strip()).returncode == 0
    result = cli("fleet", "node1", "node2", "node3", "--against", "baseline:golden", "--format", "json",
                 "--no-store", *PROBES)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    finding = next(f for f in report["findings"] if f["path"].endswith("vars.NCCL_P2P_DISABLE"))
    assert finding["majority"]["value"] == "1"
    assert sorted(o["host"] for o in finding["outliers"]) == ["node1", "node3"]
    assert report["signers"]["--against"]["state"] == "you"


def test_no_hosts_is_a_usage_error(cli: Callable[..., CliResult]) -> None:
    result = cli("fleet")
    assert result.returncode == 2
    assert "no hosts" in result.stderr


def test_a_host_that_never_answers_is_given_up_after_the_host_timeout(
        sshd_factory: Callable[..., Sshd], client_key: Path, ssh_home: Callable[..., Path],
        cli: Callable[..., CliResult]) -> None:
    # A listener that accepts and never speaks: an SSH server hung before its banner.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        home = ssh_home(client_key, {"good": sshd_factory("good")})
        config = home / ".ssh" / "config"
        config.write_text(config.read_text() + f"Host hung\n  HostName 127.0.0.1\n  Port {silent.getsockname()[1]}\n")
        started = time.monotonic()
        result = cli("fleet", "good", "hung", "--host-timeout", "3", "--probe", "env", "--format", "json")
        assert time.monotonic() - started < 30
    finally:
        silent.close()
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert list(report["snapshots"]) == ["good"]
    assert "within 3 s" in report["failures"]["hung"]
