"""The one process-tree stopper: a command and everything it started end, whatever they ignore."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from driftcheck.hosts.process_tree import interrupts_deferred, signal_tree, stop_tree


def _launcher(pid_file: Path, worker_code: str = "import time; time.sleep(60)") -> subprocess.Popen[bytes]:
    """A launcher whose worker (a grandchild of ours) would keep running if only the launcher were stopped."""
    code = (f"import subprocess, sys, time\n"
            f"worker = subprocess.Popen([sys.executable, '-c', {worker_code!r}])\n"
            f"open({str(pid_file)!r}, 'w').write(str(worker.pid))\n"
            f"time.sleep(60)\n")
    process = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the worker never started"
        time.sleep(0.05)
    return process


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_stop_tree_ends_the_command_and_its_workers(tmp_path: Path) -> None:
    process = _launcher(tmp_path / "worker.pid")
    worker = int((tmp_path / "worker.pid").read_text())
    stop_tree(process, grace_s=5)
    assert process.returncode == -signal.SIGTERM
    deadline = time.monotonic() + 10
    while not _gone(worker):
        assert time.monotonic() < deadline, "the worker outlived the stop"
        time.sleep(0.05)


def test_what_ignores_the_first_signal_is_killed_after_the_grace(tmp_path: Path) -> None:
    ignores = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    process = _launcher(tmp_path / "worker.pid", ignores)
    worker = int((tmp_path / "worker.pid").read_text())
    stop_tree(process, grace_s=0.5, signals=(signal.SIGINT, signal.SIGINT))
    assert process.returncode == -signal.SIGINT  # the launcher took the interrupt
    deadline = time.monotonic() + 10
    while not _gone(worker):  # its worker, which ignored it, was killed
        assert time.monotonic() < deadline, "the worker outlived the kill"
        time.sleep(0.05)


def test_stop_tree_reads_through_the_given_wait(tmp_path: Path) -> None:
    # srun's case: told to stop, it prints what it has before it ends; its pipe is read meanwhile, so a full
    # pipe (64 KiB) does not keep it from ending, and it is not killed for it.
    code = ("import os, signal, sys, time\n"
            "def last_words(signum, frame):\n"
            "    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # told twice: to it and to its group\n"
            "    sys.stdout.write('x' * 400_000); sys.stdout.flush(); os._exit(0)\n"
            "signal.signal(signal.SIGTERM, last_words)\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    read: list[bytes] = []

    def communicate(timeout: float) -> None:
        read.append(process.communicate(timeout=timeout)[0])

    stop_tree(process, grace_s=10, wait=communicate)
    assert process.returncode == 0 and len(read[0]) == 400_000


def test_signal_tree_reaches_every_process_below(tmp_path: Path) -> None:
    process = _launcher(tmp_path / "worker.pid")
    worker = int((tmp_path / "worker.pid").read_text())
    try:
        assert signal_tree(process.pid, signal.SIGTERM)
        assert process.wait(10) == -signal.SIGTERM
        deadline = time.monotonic() + 10
        while not _gone(worker):
            assert time.monotonic() < deadline, "the worker outlived the signal"
            time.sleep(0.05)
    finally:
        stop_tree(process, grace_s=1)
    assert not signal_tree(process.pid, signal.SIGTERM)  # nothing left to signal


def test_an_interrupt_during_a_cleanup_takes_effect_once_the_cleanup_is_done() -> None:
    # The CI case: Ctrl-C landed while the previous run's server was being stopped, and cut that short.
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        signal.raise_signal(signal.SIGINT)
        done.append("the server was stopped")
    assert done == ["the server was stopped"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back
