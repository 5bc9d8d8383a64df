"""Signalling and stopping a process and every process it started: the one way driftcheck does it.

A benchmark's launcher starts workers that hold the GPUs, a server forks its schedulers, srun starts its
steps: a signal meant for the command is meant for all of them. `signal_tree` reaches the process and its
descendants; `stop_tree` ends them (a signal, then SIGKILL to what is left after a grace period), their
process group included, with interrupts deferred until it is done, so a Ctrl-C that lands meanwhile cannot
leave half a tree running. Used by `run`'s signal relay, `try`'s runs and servers, `explain --confirm`'s
warm-up and pip, and the Slurm fleet's srun.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from driftcheck.hosts.signals import handlers_installed

if TYPE_CHECKING:
    import psutil

STOP_GRACE_S = 5.0


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block has run, then take effect as they would have (main thread
    only). A cleanup an interrupt cuts short leaves a server running: a Ctrl-C that landed while the previous
    run's server was being stopped left it up (seen in CI)."""
    caught: list[int] = []
    with handlers_installed(lambda signum, frame: caught.append(signum)):
        yield
    if caught:  # the previous handlers are back: handled now as it would have been (KeyboardInterrupt, …)
        signal.raise_signal(caught[0])


def family_of(pid: int) -> list[psutil.Process]:
    """`pid` and every process below it, as they are now (empty when `pid` is gone)."""
    # Imported where used (~20 ms): a `run` imports this module for its signal relay, and most runs are never
    # signalled.
    import psutil

    try:
        leader = psutil.Process(pid)
        return [leader, *leader.children(recursive=True)]
    except psutil.Error:
        return []


def signal_tree(pid: int, signum: int) -> bool:
    """Send `signum` to `pid` and every process below it; whether any of them got it."""
    return _signal_all(family_of(pid), signum)


def _signal_all(family: Sequence[psutil.Process], signum: int) -> bool:
    import psutil

    delivered = False
    for member in family:
        with contextlib.suppress(psutil.Error):
            member.send_signal(signum)
            delivered = True
    return delivered


def signal_group(pgid: int, signum: int) -> None:
    """Send `signum` to process group `pgid`: it also reaches what left the tree (a daemonised worker) but kept
    the group. Nothing when the group is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


Waiter = Callable[[float], object]


def stop_tree(process: subprocess.Popen[Any], grace_s: float = STOP_GRACE_S,
              signals: Sequence[int] = (signal.SIGTERM,), wait: Waiter | None = None) -> None:
    """End `process` (the leader of its own process group) and every process it started: each of `signals` in
    turn to all of them and to the group, SIGKILL to what is left after `grace_s`, then `process` reaped.

    `wait(timeout)` waits for `process` meanwhile (default `process.wait`; one whose pipes we read passes its
    `communicate`, so a full pipe does not keep it from ending). An interrupt meanwhile waits until it is done.
    """
    with interrupts_deferred():
        _stop_tree(process, grace_s, signals, wait or process.wait)


@contextlib.contextmanager
def stopped_on_the_way_out(process: subprocess.Popen[Any]) -> Iterator[None]:
    """Stop `process` and its children (`stop_tree`) if the block is left while it still runs: a child started in
    its own session gets no Ctrl-C from the terminal, so leaving early must end it."""
    try:
        yield
    finally:
        if process.poll() is None:
            stop_tree(process)


def _stop_tree(process: subprocess.Popen[Any], grace_s: float, signals: Sequence[int], wait: Waiter) -> None:
    import psutil

    family = family_of(process.pid)
    for signum in signals:
        _signal_all(family, signum)
        signal_group(process.pid, signum)
    deadline = time.monotonic() + grace_s
    with contextlib.suppress(subprocess.TimeoutExpired):
        wait(grace_s)
    _, alive = psutil.wait_procs(family, timeout=max(0.0, deadline - time.monotonic()))
    for member in alive:
        with contextlib.suppress(psutil.Error):
            member.kill()
    signal_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        wait(grace_s)
