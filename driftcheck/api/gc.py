"""`gc`: snapshots removed from the store by age and count, never one that something still points at."""

from __future__ import annotations

from driftcheck.hosts.targets import local_host
from driftcheck.store.gc import GcResult, collect
from driftcheck.store.snapshots import Store

__all__ = ["GcResult", "gc"]


def gc(*, keep_last: int | None = None, keep_days: float | None = None, dry_run: bool = False,
       store: Store | None = None) -> GcResult:
    """Remove the snapshots neither rule keeps: each host's `keep_last` newest and those younger than
    `keep_days` stay (a snapshot either keeps stays). Never removed: a snapshot a baseline, a run record or a
    running `driftcheck run` points at, `@before-boot`, `@boot` and every host's newest. Also drops hash cache
    rows of this machine's files that are gone, and gives the space back. `dry_run` only plans."""
    return collect(store or Store(), keep_last, keep_days, dry_run=dry_run, local_host=local_host().name)
