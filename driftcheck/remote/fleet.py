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
