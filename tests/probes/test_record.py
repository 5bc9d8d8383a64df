"""`driftcheck record DIR` and `driftcheck snapshot --replay DIR`, end to end through the CLI; and what a
recording keeps of files and processes, as each probe declares it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from driftcheck.hosts import Host, ReplayHost
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.daemons import DaemonsProbe
from driftcheck.probes.env import EnvProbe
from driftcheck.probes.process import ProcessProbe
from driftcheck.probes.record import record, redact_file
from driftcheck.probes.redact import REDACTED_PATTERN, Redactor
from driftcheck.probes.system import SystemProbe
from tests.conftest import DATA, CliResult

SECRET = "hf_Zq8sV3kLmN0pQrStUvWxYz12"
API_KEY = "do-not-store-this-key"


def all_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


def test_record_then_replay_gives_the_same_snapshot(tmp_path: Path, cli_process: Callable[..., CliResult]) -> None:
    env = {"HF_TOKEN": SECRET, "NCCL_DEBUG": "WARN", "OMP_NUM_THREADS": "4"}
    recording = tmp_path / "rec"
    probes = ["--probe", "env", "--probe", "nccl", "--probe", "system", "--probe", "python"]
    done = cli_process("record", str(recording), *probes, "-q", env=env)
    assert done.returncode == 0, done.stderr
    assert (recording / "host.json").is_file() and (recording / "files" / "proc" / "meminfo").is_file()
    assert SECRET.encode() not in all_bytes(recording)
    recorded_env = json.loads((recording / "host.json").read_text())["environ"]
    assert REDACTED_PATTERN.fullmatch(recorded_env["HF_TOKEN"])

    live = cli_process("snapshot", *probes, "--no-store", "-o", str(tmp_path / "live.json"), "-q", env=env)
    replayed = cli_process("snapshot", "--replay", str(recording), *probes, "--no-store", "-o",
                           str(tmp_path / "replayed.json"), "-q", env=env)
    assert live.returncode == 0 and replayed.returncode == 0, live.stderr + replayed.stderr
    document = json.loads((tmp_path / "replayed.json").read_text())
    assert document["origin"] == "replayed"
    assert {name: p["status"] for name, p in document["probes"].items()} == {
        "env": "ok", "nccl": "ok", "system": "ok", "python": "ok"}
    diff = cli_process("diff", str(tmp_path / "live.json"), str(tmp_path / "replayed.json"), "--format", "json")
    assert diff.returncode == 0, diff.stdout
    assert json.loads(diff.stdout)["changes"] == []


def test_record_refuses_a_non_empty_directory(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    done = cli("record", str(target), "--probe", "env")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not empty" in done.stderr
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]
    assert (target / "notes.txt").read_text() == "keep me"


def test_record_into_an_empty_directory(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    done = cli("record", str(target), "--probe", "system", "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads((target / "host.json").read_text())["format"] == 1


def test_recorded_process_files_are_redacted_on_disk(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    env = {**os.environ, "HF_TOKEN": SECRET}
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()", "--api-key", API_KEY],
                             stdin=subprocess.PIPE, env=env)
    try:
        done = cli("record", str(tmp_path / "rec"), "--probe", "process", "--pid", str(child.pid), "-q")
    finally:
        child.kill()
        child.wait()
    assert done.returncode == 0, done.stderr
    recorded = tmp_path / "rec" / "files" / "proc" / str(child.pid)
    assert (recorded / "environ").is_file() and (recorded / "cmdline").is_file()
    data = all_bytes(tmp_path / "rec")
    assert SECRET.encode() not in data and API_KEY.encode() not in data
    argv = (recorded / "cmdline").read_bytes().split(b"\0")
    assert REDACTED_PATTERN.fullmatch(argv[argv.index(b"--api-key") + 1].decode())
    # Replaying without --pid asks the recorded process again.
    replay = cli("snapshot", "--replay", str(tmp_path / "rec"), "--probe", "process", "--no-store",
                 "-o", str(tmp_path / "s.json"), "-q")
    assert replay.returncode == 0, replay.stderr
    processes = json.loads((tmp_path / "s.json").read_text())["probes"]["process"]["data"]["processes"]
    assert [p["pid"] for p in processes.values()] == [child.pid]


def test_redact_file_rules() -> None:
    redactor = Redactor(b"k")
    environ = redact_file(redactor, "/proc/42/environ", b"A=1\0GITHUB_TOKEN=ghp_x\0")
    assert environ.startswith(b"A=1\0GITHUB_TOKEN=<redacted:hmac-sha256:")
    text = redact_file(redactor, "/x/direct_url.json", b'{"url": "https://user:pw@example.com/r.git"}')
    assert b"user:pw" not in text and b"example.com" in text
    binary = b"\x7fELF\x02\x01\xff\xfe https://user:pw@example.com"
    assert redact_file(redactor, "/x/lib.so", binary) == binary


def test_replay_errors_are_one_line(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    done = cli("snapshot", "--replay", str(tmp_path), "--no-store", "-o", str(tmp_path / "s.json"))
    assert done.returncode == 2 and "not a recording" in done.stderr and done.stderr.count("\n") == 1
    both = cli("snapshot", "--replay", str(DATA / "hosts" / "debian12-vm-docker"), "--python", sys.executable)
    assert both.returncode == 2 and "--replay" in both.stderr
    bad = cli("snapshot", "--process", "(unclosed", "--no-store", "-o", str(tmp_path / "t.json"))
    assert bad.returncode == 2 and "regular expression" in bad.stderr


def test_recording_keeps_only_the_processes_it_describes_and_the_kept_boot_flags(
        tmp_path: Path, cli_process: Callable[..., CliResult]) -> None:
    # A server-like process that is not driftcheck's descendant (its parent shell exits at once).
    started = subprocess.run(["sh", "-c", '"$@" </dev/null >/dev/null 2>&1 & echo $!', "sh", sys.executable, "-c",
                              "import time; time.sleep(120)", "--served-model-name", "record-scope-test"],
                             capture_output=True, text=True, check=True, timeout=30)
    server = int(started.stdout.strip())
    try:
        recording = tmp_path / "rec"
        done = cli_process("record", str(recording), "--probe", "system", "--process", "record-scope-test", "-q")
        assert done.returncode == 0, done.stderr
    finally:
        os.kill(server, 15)
    proc = recording / "files" / "proc"
    recorded_pids = sorted(int(p.name) for p in proc.iterdir() if p.name.isdigit())
    assert recorded_pids == [server]
    kept = (proc / "cmdline").read_text().split()
    live = Path("/proc/cmdline").read_text().split()
    assert all(token in live for token in kept)
    assert "--" not in kept and len(kept) <= len(live)
    replayed = cli_process("snapshot", "--replay", str(recording), "--probe", "system", "--no-store",
                           "-o", str(tmp_path / "r.json"), "-q")
    assert replayed.returncode == 0, replayed.stderr
    data = json.loads((tmp_path / "r.json").read_text())["probes"]
    assert [p["pid"] for p in data["process"]["data"]["processes"].values()] == [server]


# ---- what a recording keeps is asked of each probe: record names none -------------------------------------

IRQBALANCE = DATA / "hosts" / "debian12-vm-idle-irq-irqbalance"  # irqbalance runs as pid 733 (see its SOURCE)


class _CommReader(Probe):
    """A probe that reads one process's name and says whether a replay needs that process again."""

    name = "comm_reader"

    def __init__(self, keep: bool) -> None:
        self.keep = keep

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return host.read_text("/proc/733/comm")

    def parse(self, raw: Any) -> dict[str, Any]:
        return {"comm": str(raw).strip()}

    def recorded_processes(self, data: Mapping[str, object] | None, files: Mapping[str, bytes],
                           options: ProbeOptions) -> set[int]:
        return {733} if self.keep and data == {"comm": "irqbalance"} else set()


def _recorded_pids(directory: Path) -> list[int]:
    proc = directory / "files" / "proc"
    return sorted(int(p.name) for p in proc.iterdir() if p.name.isdigit()) if proc.is_dir() else []


@pytest.mark.parametrize(("probes", "kept"), [
    ([_CommReader(keep=False)], []),
    ([_CommReader(keep=True)], [733]),
    # The daemons probe keeps the daemons it found: a replay must find them running.
    ([DaemonsProbe()], [733]),
    ([_CommReader(keep=False), DaemonsProbe()], [733]),
])
def test_a_recording_keeps_the_processes_its_probes_need_again(
        tmp_path: Path, probes: list[Probe], kept: list[int]) -> None:
    result = record(tmp_path / "rec", ReplayHost(IRQBALANCE), probes, Redactor(b"k"))
    assert all(outcome.status == "ok" for outcome in result.outcomes.values()), result.outcomes
    assert _recorded_pids(tmp_path / "rec") == kept


def test_the_process_probe_keeps_what_it_described_and_the_pids_asked() -> None:
    data = {"processes": {"sglang": {"pid": 41}, "vllm": {"pid": 42}, "odd": {"pid": "x"}}}
    probe = ProcessProbe(Redactor(b"k"))
    assert probe.recorded_processes(data, {}, ProbeOptions(pids=(7,))) == {7, 41, 42}
    assert probe.recorded_processes(None, {}, ProbeOptions()) == set()


def test_the_system_probe_keeps_only_the_boot_flags_it_reads() -> None:
    cmdline = b"BOOT_IMAGE=/vmlinuz root=UUID=1234 ro isolcpus=2-3 quiet -- init_arg=1\n"
    redactor = Redactor(b"k")
    assert redact_file(redactor, "/proc/cmdline", cmdline, [EnvProbe(redactor), SystemProbe()]) == b"isolcpus=2-3\n"
    # Asked of no probe, it is a file like any other: stored as read.
    assert redact_file(redactor, "/proc/cmdline", cmdline) == cmdline
