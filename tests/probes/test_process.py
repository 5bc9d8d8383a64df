"""The process probe against real child processes started here, and on a recorded server process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.process import ProcessProbe, mapped_gpus, performance_libraries, process_key
from driftcheck.probes.redact import REDACTED_PATTERN, Redactor
from driftcheck.probes.runner import run_one
from tests.conftest import DATA

pytestmark = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")

# The child loads a shared object from a directory whose name marks it as a kernel library the probe
# hashes, then waits on stdin so the test decides when it ends.
CHILD = """
import ctypes, sys
ctypes.CDLL(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
"""

# A process is keyed by its program name: `python`, or `python3` in a venv made by `python3 -m venv`.
PYTHON_KEY = f"{Path(sys.executable).name} -c"


def a_real_shared_object() -> Path:
    """A shared object of this interpreter's standard library (a real ELF file to map)."""
    import _ctypes  # an extension module, so a file ctypes can load

    path = getattr(_ctypes, "__file__", None)
    if not path or not path.endswith(".so"):
        pytest.skip("this interpreter has ctypes built in: no shared object file to load")
    return Path(path)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    library = tmp_path / "flashinfer" / "_kernels.so"
    library.parent.mkdir()
    shutil.copy(a_real_shared_object(), library)
    env = {**os.environ, "NCCL_DEBUG": "INFO", "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwx", "OMP_NUM_THREADS": "3"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(library), "--port", "30000", "--api-key", "topsecret"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    try:
        yield child, library
    finally:
        child.kill()
        child.wait()


def probe() -> ProcessProbe:
    return ProcessProbe(Redactor(b"test-secret"))


def test_live_child_process(server: tuple[subprocess.Popen[str], Path]) -> None:
    child, library = server
    outcome = run_one(probe(), LocalHost(), ProbeOptions(pids=(child.pid,)))
    assert outcome.status == "ok", outcome.error
    processes = (outcome.data or {})["processes"]
    assert list(processes) == [PYTHON_KEY]
    entry = processes[PYTHON_KEY]
    assert entry["pid"] == child.pid
    assert entry["cmdline"][-4:-1] == ["--port", "30000", "--api-key"]
    assert REDACTED_PATTERN.fullmatch(entry["cmdline"][-1])
    assert "topsecret" not in repr(entry)
    assert entry["environ"]["NCCL_DEBUG"] == "INFO" and entry["environ"]["OMP_NUM_THREADS"] == "3"
    assert REDACTED_PATTERN.fullmatch(entry["environ"]["HF_TOKEN"])
    assert entry["affinity"] is not None and entry["threads"] >= 1
    assert entry["numa_policies"] and entry["cgroup"]
    expected = hashlib.sha256(library.read_bytes()).hexdigest()
    assert entry["mapped_libraries"][str(library)] == {"sha256": expected, "deleted": False}
    assert entry["gpus"] == []


def test_library_replaced_after_load_is_flagged(server: tuple[subprocess.Popen[str], Path]) -> None:
    child, library = server
    library.unlink()  # what reinstalling a wheel under a running server does
    library.write_bytes(b"rebuilt")
    outcome = run_one(probe(), LocalHost(), ProbeOptions(pids=(child.pid,)))
    entry = (outcome.data or {})["processes"][PYTHON_KEY]
    assert entry["mapped_libraries"][str(library)] == {"sha256": None, "deleted": True}


@pytest.fixture
def detached_server() -> Iterator[int]:
    """A server-like process that is not our descendant (its parent shell exits), as a real server is not."""
    started = subprocess.run(["sh", "-c", '"$@" </dev/null >/dev/null 2>&1 & echo $!', "sh", sys.executable, "-c",
                              "import time; time.sleep(120)", "--api-key", "s3cret-value"],
                             capture_output=True, text=True, check=True, timeout=30)
    pid = int(started.stdout.strip())
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGTERM)


def test_pattern_finds_the_server_but_never_ourselves(detached_server: int,
                                                      server: tuple[subprocess.Popen[str], Path]) -> None:
    child, _ = server  # our own child also carries --api-key: like a facts script, it must not match
    outcome = run_one(probe(), LocalHost(), ProbeOptions(process_patterns=(r"--api-key", "no-such-process-xyz")))
    assert outcome.status == "ok", outcome.error
    data = outcome.data or {}
    assert [entry["pid"] for entry in data["processes"].values()] == [detached_server]
    assert child.pid != detached_server
    assert data["not_found"] == ["pattern no-such-process-xyz"]
    assert "s3cret-value" not in json.dumps(data)


def test_missing_pid_is_unavailable() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    outcome = run_one(probe(), LocalHost(), ProbeOptions(pids=(gone.pid,)))
    assert outcome.status == "unavailable"
    assert f"pid {gone.pid}" in (outcome.error or {})["message"]


def test_nothing_asked_is_unavailable() -> None:
    assert run_one(probe(), LocalHost(), ProbeOptions()).status == "unavailable"


def recorded_server() -> dict[str, Any]:
    host = ReplayHost(DATA / "hosts" / "debian12-vm-docker")
    options = ProbeOptions.from_json(host.recorded_options or {})
    outcome = run_one(probe(), host, options)
    assert outcome.status == "ok", outcome.error
    return outcome.data or {}


def test_recorded_server_keyed_by_script_and_never_the_recorder() -> None:
    data = recorded_server()
    # The recorder's own command line matches the pattern too; it must not be described.
    assert list(data["processes"]) == ["nccl_server.py"]
    entry = data["processes"]["nccl_server.py"]
    lib = "/opt/ml-env/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
    # The sha256 the recorder's sha256sum printed for the real nvidia-nccl-cu13 2.30.7 wheel's library.
    assert entry["mapped_libraries"] == {lib: {
        "sha256": "618968ee277041751512e619190132a9bdf351c3ce7129c73484f6ef441ad692", "deleted": False}}
    assert entry["environ"]["NCCL_SOCKET_IFNAME"] == "eth0"
    assert REDACTED_PATTERN.fullmatch(entry["environ"]["HF_TOKEN"])
    assert REDACTED_PATTERN.fullmatch(entry["cmdline"][entry["cmdline"].index("--api-key") + 1])
    assert entry["affinity"] == "0-1"


def test_key_and_maps_parsers() -> None:
    assert process_key(["/venv/bin/python3", "-u", "-m", "sglang.launch_server", "--tp", "8"], "python3") \
        == "sglang.launch_server"
    assert process_key(["python", "-W", "ignore", "serve.py"], "python") == "serve.py"
    assert process_key(["sglang::scheduler_TP0"], "sglang::schedu") == "sglang::scheduler_TP0"
    assert process_key([], "kworker") == "kworker"
    maps = ("7f00-7f10 r-xp 00000000 fd:01 12 /venv/nvidia/nccl/lib/libnccl.so.2\n"
            "7f10-7f20 r-xp 00000000 fd:01 13 /venv/torch/lib/libtorch_cuda.so (deleted)\n"
            "7f20-7f30 r--p 00000000 fd:01 14 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
            "7f30-7f40 rw-s 00000000 00:05 15 /dev/nvidia3\n"
            "7f40-7f50 rw-s 00000000 00:05 16 /dev/nvidiactl\n"
            "7f50-7f60 rw-p 00000000 00:00 0 \n")
    assert performance_libraries(maps) == {"/venv/nvidia/nccl/lib/libnccl.so.2": False,
                                           "/venv/torch/lib/libtorch_cuda.so": True}
    assert mapped_gpus(maps) == [3]


def test_two_workers_keyed_by_start_order_share_one_hash(server: tuple[subprocess.Popen[str], Path]) -> None:
    first, library = server
    second = subprocess.Popen([sys.executable, "-c", CHILD, str(library)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert second.stdout is not None and second.stdout.readline().strip() == "ready"
        outcome = run_one(probe(), LocalHost(), ProbeOptions(pids=(second.pid, first.pid)))
    finally:
        second.kill()
        second.wait()
    processes = (outcome.data or {})["processes"]
    # Keys follow start time, not the order the pids were given.
    assert {key: entry["pid"] for key, entry in processes.items()} == {PYTHON_KEY: first.pid,
                                                                       f"{PYTHON_KEY}#2": second.pid}
    digests = {entry["mapped_libraries"][str(library)]["sha256"] for entry in processes.values()}
    assert digests == {hashlib.sha256(library.read_bytes()).hexdigest()}
