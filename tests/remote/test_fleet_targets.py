"""A fleet's hosts are targets of the one host factory: recorded machines compare like live ones, no sshd needed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from driftcheck.remote.fleet import FleetRequest, snapshot_targets
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult

HOSTS = Path(__file__).resolve().parents[1] / "data" / "hosts"
PLAIN = f"replay:{HOSTS / 'debian12-vm-docker'}"
P2P_OFF = f"replay:{HOSTS / 'debian12-vm-docker-nccl-p2p-disable'}"


def test_each_target_is_snapshotted_and_a_bad_one_fails_alone(tmp_path: Path) -> None:
    missing = f"replay:{tmp_path}"
    results = snapshot_targets(FleetRequest((PLAIN, missing), probes=("nccl",), label="fleet"))
    assert list(results) == [PLAIN, missing]
    taken = results[PLAIN].snapshot
    assert taken is not None and taken.document["origin"] == "replayed" and taken.document["label"] == "fleet"
    assert results[missing].snapshot is None and "not a recording" in str(results[missing].error)
    assert Store().entries() == []  # the fleet keeps nothing itself; the command decides


def test_the_fleet_command_names_the_recorded_outlier(cli: Callable[..., CliResult]) -> None:
    result = cli("fleet", PLAIN, P2P_OFF, PLAIN.replace("docker", "docker-omp-threads"), "--probe", "nccl")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{P2P_OFF}: nccl.env.NCCL_P2P_DISABLE = 1 (2 of 3 hosts: unset)" in result.stdout
    assert f"outliers: {P2P_OFF}\n" in result.stdout
    assert len(Store().entries()) == 3
