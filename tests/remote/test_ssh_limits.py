"""SSHHost within bounds against a real sshd: an interpreter announcing a 1 TB answer is refused before it
is read, and a reader abandoned after a time-out does not stay alive on the host."""

from __future__ import annotations

import contextlib
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.errors import CommandTimeout, HostError
from driftcheck.hosts.ssh import MAX_ANSWER_BYTES, SSHHost
from tests.remote.sshd import Sshd, needs_sshd

pytestmark = [needs_sshd, pytest.mark.slow]


def test_an_answer_announced_larger_than_the_cap_is_refused_unread(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], tmp_path: Path) -> None:
    liar = tmp_path / "python3"
    # Announces 1 TB, then streams zeros: the old reader kept them all (5.8 GB before it was stopped).
    liar.write_text("#!/bin/sh\nprintf '1000000000000\\n'\nexec head -c 2000000000 /dev/zero\n")
    liar.chmod(0o755)
    ssh_home(client_key, {"node1": sshd})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(HostError, match="announced a 1,000,000,000,000-byte answer"):
        SSHHost("node1", python=str(liar)).connect()
    assert time.monotonic() - started < 20
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < MAX_ANSWER_BYTES // 1024


def _blocked_readers() -> set[int]:
    """Batch readers blocked opening a FIFO that has no writer (the kernel's wait_for_partner)."""
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"Batch reader run by the" in Path(f"/proc/{entry}/cmdline").read_bytes() \
                    and Path(f"/proc/{entry}/wchan").read_text() == "wait_for_partner":
                found.add(int(entry))
        except OSError:
            continue
    return found


def test_a_reader_abandoned_after_a_time_out_is_ended_on_the_host(
        sshd: Sshd, client_key: Path, ssh_home: Callable[..., Path], tmp_path: Path) -> None:
    ssh_home(client_key, {"node1": sshd})
    fifo = tmp_path / "no-writer"
    os.mkfifo(fifo)
    others = _blocked_readers()  # another test's, if one runs alongside
    try:
        with SSHHost("node1", grace_s=1.0) as host:
            with pytest.raises(CommandTimeout):
                host.read_bytes(str(fifo))  # blocks the reader for good: nothing writes to the FIFO
            deadline = time.monotonic() + 10
            while (left := _blocked_readers() - others) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not left, f"the abandoned reader is still running on the host: {sorted(left)}"
            # The next call starts a fresh reader, as before.
            assert host.read_text("/proc/sys/kernel/ostype").strip() == "Linux"
    finally:
        with contextlib.suppress(OSError):  # release a reader left behind, so the test leaves none
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
