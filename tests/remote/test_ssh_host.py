"""SSHHost against a real OpenSSH sshd on 127.0.0.1: host keys, authentication, batching, time limits."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.errors import ChangedHostKeyError, CommandTimeout, ConnectionLost, HostError, UnknownHostKeyError
from driftcheck.hosts.ssh import SSHHost
from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import run_one
from driftcheck.probes.system import SystemProbe
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.signing import verify_document
from tests.remote.sshd import Sshd, keygen, needs_sshd

pytestmark = [needs_sshd, pytest.mark.slow]


def _fingerprint(server: Sshd) -> str:
    done = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", f"{server.host_key}.pub"], capture_output=True,
                          text=True, check=True)
    return done.stdout.split()[1]


def test_snapshot_over_ssh_comes_from_the_remote_interpreter_in_few_round_trips(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], remote_python: Path) -> None:
    ssh_home(client_key, {"node1": sshd})
    with SSHHost("node1", python=str(remote_python)) as host:
        probes = select_probes(builtin_probes(Redactor(b"k")), None, None)
        snapshot = Prober(host, Redactor(b"k"), load_signing_key(), options=ProbeOptions()).snapshot(probes)
        trips = host.round_trips
    document = snapshot.document
    assert document["host"]["kind"] == "ssh"
    assert document["host"]["address"] == "node1"
    assert document["host"]["host_key_fingerprint"] == _fingerprint(sshd)
    python = document["probes"]["python"]
    assert python["status"] == "ok", python
    # The far side's venv, not the interpreter running this test.
    assert python["data"]["prefix"] == str(remote_python.parent.parent)
    assert document["probes"]["system"]["status"] == "ok"
    assert document["probes"]["packages"]["status"] == "ok"
    assert document["probes"]["kernels"]["status"] == "ok", document["probes"]["kernels"]
    assert 1 < trips <= 10
    assert verify_document(document).intact


def test_proc_self_is_read_by_the_target_interpreter(sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path],
                                                    remote_python: Path) -> None:
    ssh_home(client_key, {"node1": sshd})
    with SSHHost("node1", python=str(remote_python)) as host:
        status = host.read_text("/proc/self/status")
        cmdline = host.read_bytes("/proc/self/cmdline").split(b"\0")
    assert status.splitlines()[0].split()[1].startswith("python")
    assert cmdline[0].decode() == str(remote_python)


def test_unknown_host_key_is_refused_with_its_fingerprint(sshd: Sshd, client_key: Path,
                                                         ssh_home: Callable[..., Path]) -> None:
    home = ssh_home(client_key, {"node1": sshd}, known=False)
    with pytest.raises(UnknownHostKeyError) as caught:
        SSHHost("node1").connect()
    assert _fingerprint(sshd) in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not (home / ".ssh" / "known_hosts").exists()


def test_accept_new_host_key_records_it_and_is_trusted_after(sshd: Sshd, client_key: Path,
                                                            ssh_home: Callable[..., Path]) -> None:
    home = ssh_home(client_key, {"node1": sshd}, known=False)
    with SSHHost("node1", accept_new_host_key=True) as host:
        assert host.read_text("/proc/sys/kernel/ostype").strip() == "Linux"
    recorded = (home / ".ssh" / "known_hosts").read_text()
    assert recorded.split()[0] == f"[127.0.0.1]:{sshd.port}"
    assert sshd.host_public_key in recorded
    with SSHHost("node1") as host:
        assert host.host_key_fingerprint == _fingerprint(sshd)


def test_hashed_known_hosts_entries_are_honoured(sshd: Sshd, client_key: Path,
                                                 ssh_home: Callable[..., Path]) -> None:
    home = ssh_home(client_key, {"node1": sshd})
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(home / ".ssh" / "known_hosts")], check=True,
                   capture_output=True)
    assert (home / ".ssh" / "known_hosts").read_text().startswith("|1|")
    with SSHHost("node1") as host:
        assert host.host_key_fingerprint == _fingerprint(sshd)


def test_changed_host_key_is_refused_even_when_accepting_new_keys(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], tmp_path: Path) -> None:
    home = ssh_home(client_key, {"node1": sshd})
    other = keygen(tmp_path / "other_host_key")
    line = " ".join(Path(f"{other}.pub").read_text().split()[:2])
    (home / ".ssh" / "known_hosts").write_text(f"[127.0.0.1]:{sshd.port} {line}\n")
    with pytest.raises(ChangedHostKeyError) as caught:
        SSHHost("node1", accept_new_host_key=True).connect()
    assert _fingerprint(sshd) in str(caught.value)
    assert "CHANGED" in str(caught.value)


def test_wrong_client_key_is_refused(sshd: Sshd, ssh_home: Callable[..., Path], tmp_path: Path) -> None:
    stranger = keygen(tmp_path / "stranger")
    ssh_home(stranger, {"node1": sshd})
    with pytest.raises(HostError, match="authentication failed"):
        SSHHost("node1", identity=str(stranger)).connect()


def test_missing_remote_interpreter_is_one_line(sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path]) -> None:
    ssh_home(client_key, {"node1": sshd})
    with pytest.raises(HostError) as caught:
        SSHHost("node1", python="/nonexistent/bin/python3").connect()
    assert "not found" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_command_hanging_past_its_limit_is_a_timeout_not_a_hang(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path]) -> None:
    ssh_home(client_key, {"node1": sshd})
    with SSHHost("node1") as host:
        started = time.monotonic()
        with pytest.raises(CommandTimeout):
            host.run(["sleep", "60"], timeout_s=1.0)
        assert time.monotonic() - started < 15
        # The connection is still usable after the abandoned command.
        assert host.run(["echo", "still here"]).stdout.strip() == "still here"


def test_a_dropped_connection_ends_the_probe_as_error(sshd: Sshd, client_key: Path,
                                                      ssh_home: Callable[..., Path]) -> None:
    ssh_home(client_key, {"node1": sshd})
    with SSHHost("node1") as host:
        transport = host._client.get_transport() if host._client else None
        assert transport is not None
        transport.close()
        with pytest.raises(ConnectionLost):
            host.read_bytes("/proc/cpuinfo")
        outcome = run_one(SystemProbe(), host, ProbeOptions())
    assert outcome.status == "error"


def test_proxy_jump_reaches_a_host_through_another(sshd_factory: Callable[..., Sshd], client_key: Path,
                                                   ssh_home: Callable[..., Path]) -> None:
    jump, inner = sshd_factory("jump"), sshd_factory("inner")
    home = ssh_home(client_key, {"jump": jump, "inner": inner})
    config = home / ".ssh" / "config"
    config.write_text(config.read_text() + "Host behind\n  HostName 127.0.0.1\n"
                      f"  Port {inner.port}\n  User root\n  IdentityFile {client_key}\n  ProxyJump jump\n")
    with SSHHost("behind") as host:
        assert host.host_key_fingerprint == _fingerprint(inner)
        assert json.loads(json.dumps(host.describe()))["address"] == "behind"


def test_a_remote_reader_that_blocks_is_abandoned_and_the_next_call_starts_afresh(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], tmp_path: Path) -> None:
    ssh_home(client_key, {"node1": sshd})
    fifo = tmp_path / "no-writer"
    os.mkfifo(fifo)
    try:
        with SSHHost("node1", grace_s=2.0) as host:
            started = time.monotonic()
            with pytest.raises(CommandTimeout):
                host.read_bytes(str(fifo))  # opening a FIFO with no writer blocks the reader for good
            assert time.monotonic() - started < 10
            assert host.read_text("/proc/sys/kernel/ostype").strip() == "Linux"
    finally:
        # Release the abandoned reader should it be left (it is ended on a time-out: then ENXIO, no reader).
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_gpu_facts_come_from_nvidia_smi_over_the_channel(sshd_factory: Callable[..., Sshd], client_key: Path,
                                                         ssh_home: Callable[..., Path], tmp_path: Path) -> None:
    # No GPU here: the far side's nvidia-smi replays real recorded outputs (tests/data/nvidia, see SOURCES.md).
    data = Path(__file__).resolve().parent.parent / "data" / "nvidia"
    bin_dir = tmp_path / "fake-driver-bin"
    bin_dir.mkdir()
    tool = bin_dir / "nvidia-smi"
    topo = data / "topo" / "h100-nvl-x2_550.127.05_nv12_nic1_sglang-2874.txt"
    xml = data / "xml" / "rtx-2070-x2_590.44.01_v13.xml"
    tool.write_text(f'#!/bin/sh\nif [ "$1" = topo ]; then cat {topo}; else cat {xml}; fi\n')
    tool.chmod(0o755)
    server = sshd_factory("gpu", {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"})
    ssh_home(client_key, {"gpunode": server})
    with SSHHost("gpunode", python=sys.executable) as host:
        snapshot = Prober(host, Redactor(b"k")).snapshot([GpuProbe(), PcieProbe()])
    gpu = snapshot.document["probes"]["gpu"]
    assert gpu["status"] == "ok", gpu
    assert gpu["data"]["source"] == "nvidia-smi-xml" and gpu["data"]["gpu_count"] == 2
    pcie = snapshot.document["probes"]["pcie"]
    assert pcie["status"] == "ok" and pcie["data"]["topology"]["pairs"]["GPU0~GPU1"] == "NV12"


def test_a_server_log_larger_than_an_answer_is_read_line_by_line_on_the_far_side(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], remote_python: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A server's log of weeks is gigabytes; read whole, it is one answer past MAX_ANSWER_BYTES (here made small),
    # refused with every other call of its round trip, and held whole in memory on the far side first.
    from driftcheck.hosts import ssh
    from driftcheck.probes.server import ServerProbe

    logs = Path(__file__).resolve().parent.parent / "data" / "servers" / "logs"
    monkeypatch.setattr(ssh, "MAX_ANSWER_BYTES", 1 << 20)
    log = tmp_path / "vllm.log"
    request = b"(APIServer pid=1) INFO 11-18 14:20:01 [loggers.py:127] 127.0.0.1:51234 - \"POST /v1/completions\" 200\n"
    log.write_bytes(request * 30_000 + (logs / "vllm-0.11.0-issue-28910-tp8.log").read_bytes() + request * 30_000)
    ssh_home(client_key, {"node1": sshd})
    probe = ServerProbe(Redactor(b"k"))
    with SSHHost("node1", python=str(remote_python)) as host:
        data = probe.parse(probe.gather(host, ProbeOptions(server_log=str(log))))
        with pytest.raises(FileNotFoundError):
            host.read_lines(str(tmp_path / "gone.log"), re.compile(b"x"))
    assert data["server_args"]["tensor_parallel_size"] == 8 and data["server_log"]["path"] == str(log)
