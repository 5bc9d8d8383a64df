"""A CPU quota on one process and everything it starts: the kernel's CFS bandwidth control, through a cgroup
made for the test (cgroup v1's `cpu` controller: cpu.cfs_quota_us over cpu.cfs_period_us; else cgroup v2's
cpu.max), as a container's `--cpus` or a Slurm job's CPU limit puts one on a node.

Used to slow one of the test fleet's sshd hosts on purpose: its sessions, and the benchmarks they run, get
`share` of one CPU. Where this machine lets no cgroup be made (not root, a read-only /sys/fs/cgroup, no cpu
controller), `cpu_quota` yields None and the test says what it asserted without one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

V1_CPU = Path("/sys/fs/cgroup/cpu")
V2_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def _v1(group: Path, share: float) -> None:
    group.mkdir()
    (group / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
    (group / "cpu.cfs_quota_us").write_text(f"{int(PERIOD_US * share)}\n")


def _v2(group: Path, share: float) -> None:
    if "cpu" not in (V2_ROOT / "cgroup.controllers").read_text().split():
        raise OSError("cgroup v2 without the cpu controller")
    (V2_ROOT / "cgroup.subtree_control").write_text("+cpu\n")
    group.mkdir()
    (group / "cpu.max").write_text(f"{int(PERIOD_US * share)} {PERIOD_US}\n")


def _made_group(name: str, share: float) -> Path | None:
    """The cgroup made for `name`, its quota set; None where none can be made here."""
    for root, make in ((V1_CPU, _v1), (V2_ROOT, _v2)):
        control = "cpu.cfs_quota_us" if make is _v1 else "cgroup.controllers"
        if not (root / control).exists():
            continue
        group = root / name
        try:
            make(group, share)
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            continue
        return group
    return None


def _remove(group: Path) -> None:
    # What the group held has ended with its sshd (or is ending): move stragglers out, then remove it.
    parent = group.parent
    deadline = time.monotonic() + 10
    while True:
        with contextlib.suppress(OSError):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (parent / "cgroup.procs").write_text(f"{pid}\n")
        try:
            group.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                return  # left behind, empty soon; the name is the test's own
            time.sleep(0.1)


@contextlib.contextmanager
def cpu_quota(pid: int, share: float) -> Iterator[float | None]:
    """Put process `pid` (and what it starts from now on) under a quota of `share` of one CPU; yields the share,
    or None where this machine lets no cgroup be made. The group is removed afterwards."""
    group = _made_group(f"driftcheck-test-{os.getpid()}-{pid}", share)
    if group is None:
        yield None
        return
    try:
        (group / "cgroup.procs").write_text(f"{pid}\n")
    except OSError:
        _remove(group)
        yield None
        return
    try:
        yield share
    finally:
        _remove(group)
