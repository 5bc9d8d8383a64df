"""Snapshotting many machines at once: bounded concurrency, a time limit per host, failures kept apart.

A host that cannot be reached, refuses its key or runs past its limit is a failure of that host
only: the others are snapshotted and compared all the same.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from driftcheck.errors import DriftcheckError
from driftcheck.hosts.targets import host_for
from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
from driftcheck.snapshot.keys import load_redaction_secret, load_signing_key
from driftcheck.snapshot.model import Snapshot

DEFAULT_CONCURRENCY = 32
DEFAULT_HOST_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class HostResult:
    """How one host's snapshot ended: the snapshot, or why there is none."""

    host: str
    snapshot: Snapshot | None
    error: str | None
    duration_s: float


@dataclass(frozen=True)
class FleetRequest:
    """Which hosts to snapshot and how: each a target (`[user@]host[:port]` over SSH, or `replay:DIR`, `local`),
    the interpreter whose packages matter on each, the SSH login, the probes (`probes`: only these; `skip`:
    not these), a label, and the concurrency and per-host time limit."""

    hosts: tuple[str, ...]
    python: str | None = None
    identity: str | None = None
    accept_new_host_key: bool = False
    probes: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    label: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    host_timeout_s: float = DEFAULT_HOST_TIMEOUT_S


TakeOne = Callable[[str], Snapshot]
FleetProgress = Callable[[HostResult, int, int], None]


def _within(take: TakeOne, host: str, timeout_s: float) -> Snapshot:
    """`take(host)` in a thread of its own, abandoned (it is a daemon) once `timeout_s` has passed."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["snapshot"] = take(host)
        except BaseException as exc:  # noqa: BLE001 - carried back to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name=f"fleet-{host}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError(f"no snapshot within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["snapshot"]  # type: ignore[return-value]


def _one(take: TakeOne, host: str, timeout_s: float) -> HostResult:
    started = time.monotonic()
    try:
        snapshot = _within(take, host, timeout_s)
    except DriftcheckError as exc:
        return HostResult(host, None, str(exc), time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - one host's failure must not end the fleet
        return HostResult(host, None, f"{type(exc).__name__}: {exc}", time.monotonic() - started)
    return HostResult(host, snapshot, None, time.monotonic() - started)


def snapshot_fleet(hosts: Sequence[str], take: TakeOne, concurrency: int = DEFAULT_CONCURRENCY,
                   host_timeout_s: float = DEFAULT_HOST_TIMEOUT_S,
                   progress: FleetProgress | None = None) -> dict[str, HostResult]:
    """`take` every host, at most `concurrency` at a time, each within `host_timeout_s`; host → result."""
    results: dict[str, HostResult] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(hosts))),
                            thread_name_prefix="fleet") as pool:
        futures = [pool.submit(_one, take, host, host_timeout_s) for host in hosts]
        for future in as_completed(futures):
            result = future.result()
            results[result.host] = result
            if progress:
                progress(result, len(results), len(hosts))
    return {host: results[host] for host in hosts}


def target_taker(request: FleetRequest, options: ProbeOptions | None = None) -> TakeOne:
    """A `take` that snapshots one target of `request`, signed with the user's key (kept nowhere).

    Unknown probe names fail here, before any host is contacted."""
    redactor = Redactor(load_redaction_secret())
    key = load_signing_key()
    options = options or ProbeOptions()
    select_probes(builtin_probes(redactor), list(request.probes) or None, list(request.skip) or None,
                  options=options)

    def take(name: str) -> Snapshot:
        with host_for(name, request.python, identity=request.identity,
                      accept_new_host_key=request.accept_new_host_key) as target:
            prober = Prober(target, redactor, key, options=options)
            return prober.snapshot(prober.probes(request.probes, request.skip), label=request.label)

    return take


def snapshot_targets(request: FleetRequest, progress: FleetProgress | None = None) -> dict[str, HostResult]:
    """Every target of `request` snapshotted, failures kept apart; target → result."""
    return snapshot_fleet(request.hosts, target_taker(request), request.concurrency, request.host_timeout_s, progress)
