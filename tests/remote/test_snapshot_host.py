"""`driftcheck snapshot/record/check --host` against a real sshd: the command line's side of SSH."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.store.snapshots import Store
from tests.conftest import CliResult
from tests.remote.sshd import Sshd, needs_sshd

pytestmark = [needs_sshd, pytest.mark.slow]


def test_snapshot_of_a_remote_host_is_signed_here_and_names_the_host_key(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], remote_python: Path, tmp_path: Path,
        cli: Callable[..., CliResult]) -> None:
    ssh_home(client_key, {"node1": sshd})
    out = tmp_path / "remote.json"
    result = cli("snapshot", "--host", "node1", "--python", str(remote_python), "--probe", "python",
                 "--probe", "system", "--probe", "env", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["host"]["kind"] == "ssh"
    assert document["host"]["host_key_fingerprint"].startswith("SHA256:")
    assert document["probes"]["python"]["data"]["prefix"] == str(remote_python.parent.parent)
    assert cli("verify", str(out)).returncode == 0


def test_snapshot_to_stdout_prints_only_the_document(sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path],
                                                     cli: Callable[..., CliResult]) -> None:
    ssh_home(client_key, {"node1": sshd})
    result = cli("snapshot", "--host", "node1", "--probe", "env", "-o", "-", "--no-store", "-q")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["probes"]["env"]["status"] == "ok"


def test_unknown_host_key_exits_2_with_the_fingerprint_on_one_line_and_writes_nothing(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], tmp_path: Path,
        cli: Callable[..., CliResult]) -> None:
    home = ssh_home(client_key, {"node1": sshd}, known=False)
    out = tmp_path / "never.json"
    result = cli("snapshot", "--host", "node1", "-o", str(out))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "SHA256:" in lines[0] and "--accept-new-host-key" in lines[0]
    assert not out.exists()
    assert not (home / ".ssh" / "known_hosts").exists()
    assert Store().entries() == []


def test_record_over_ssh_replays_to_the_same_facts(sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path],
                                                   tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    ssh_home(client_key, {"node1": sshd})
    recording = tmp_path / "rec"
    result = cli("record", str(recording), "--host", "node1", "--probe", "system", "--probe", "env", "-q")
    assert result.returncode == 0, result.stderr
    live = tmp_path / "live.json"
    assert cli("snapshot", "--host", "node1", "--probe", "system", "--probe", "env", "-o", str(live),
               "--no-store", "-q").returncode == 0
    replayed = tmp_path / "replayed.json"
    assert cli("snapshot", "--replay", str(recording), "-o", str(replayed), "--no-store", "-q").returncode == 0
    a, b = json.loads(live.read_text()), json.loads(replayed.read_text())
    assert a["probes"]["system"]["data"]["cpu"] == b["probes"]["system"]["data"]["cpu"]


def test_check_against_a_remote_host(sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path],
                                     cli: Callable[..., CliResult]) -> None:
    ssh_home(client_key, {"node1": sshd})
    first = cli("snapshot", "--host", "node1", "--probe", "system", "--probe", "env", "-q")
    assert first.returncode == 0, first.stderr
    assert cli("baseline", "save", "golden", first.stdout.strip()).returncode == 0
    result = cli("check", "--host", "node1", "--against", "golden", "--probe", "system", "--probe", "env")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check: ok" in result.stdout
