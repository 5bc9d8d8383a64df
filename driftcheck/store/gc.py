"""Garbage collection of the store: drop old snapshots, never one something still points at.

Pinned, whatever the limits say: every snapshot a baseline names, every snapshot a run record points at
(table `runs`, columns `snapshot_id` and `after_snapshot_id`, when the store has one), every snapshot a
running process holds (table `pins`: a `driftcheck run` whose command still runs), and per host the
newest snapshot from before its current boot (`@before-boot`) and the first of the current boot
(`@boot`), and each host's newest snapshot. Beyond those, a snapshot stays when it is one of its host's
newest `keep_last`, or younger than `keep_days` days. The hash cache forgets files of this machine that are gone.

The plan is made and carried out inside one write transaction: no snapshot, run record or pin another
process writes can land between what gc read and what it deletes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.store.database import RUN_SNAPSHOT_COLUMNS, write_failure
from driftcheck.store.hashcache import HashCache
from driftcheck.store.named import NamedSnapshots
from driftcheck.store.pins import Pin, drop_ended_pins, live_pins, process_alive
from driftcheck.store.snapshots import Store, StoredSnapshot


@dataclass
class GcPlan:
    """What a collection removes, and why each kept snapshot stays."""

    remove: list[StoredSnapshot] = field(default_factory=list)
    keep: list[tuple[StoredSnapshot, list[str]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"remove": [{"id": e.id, "created_at": e.created_at, "host": e.host, "label": e.label}
                           for e in self.remove],
                "keep": [{"id": e.id, "created_at": e.created_at, "host": e.host, "label": e.label, "why": why}
                         for e, why in self.keep]}


@dataclass(frozen=True)
class GcResult:
    """What a collection did."""

    plan: GcPlan
    removed: int
    hash_rows_dropped: int
    bytes_before: int
    bytes_after: int
    dry_run: bool

    def to_json(self) -> dict[str, Any]:
        return {**self.plan.to_json(), "removed": self.removed, "hash_rows_dropped": self.hash_rows_dropped,
                "bytes_before": self.bytes_before, "bytes_after": self.bytes_after, "dry_run": self.dry_run}


def run_record_ids(store: Store) -> set[str]:
    """Snapshot ids the store's run records point at."""
    if not store.path.exists():
        return set()
    found: set[str] = set()
    with store.database() as db:
        for column in RUN_SNAPSHOT_COLUMNS:
            found.update(str(row[0]) for row in db.execute(f"SELECT {column} FROM runs WHERE {column} IS NOT NULL"))
    return found


def pins(store: Store, alive: Callable[[Pin], bool] = process_alive) -> dict[str, list[str]]:
    """Snapshot id (or id prefix, as a record may hold) -> why it must stay (`alive`: whether a pinning
    process still runs)."""
    reasons: dict[str, list[str]] = {}
    if store.path.exists():
        with store.database() as db:
            for snapshot_id, why in live_pins(db, alive).items():
                reasons.setdefault(snapshot_id, []).extend(why)
    for baseline in NamedSnapshots(store).entries():
        reasons.setdefault(baseline.snapshot_id, []).append(f"baseline {baseline.name}")
    for snapshot_id in run_record_ids(store):
        reasons.setdefault(snapshot_id, []).append("run record")
    for host in store.hosts():
        points = store.boot_points(host)
        if points.before_id:
            reasons.setdefault(points.before_id, []).append("@before-boot")
        if points.first_id:
            reasons.setdefault(points.first_id, []).append("@boot")
    return reasons


def _created(entry: StoredSnapshot) -> datetime | None:
    try:
        return datetime.fromisoformat(entry.created_at.replace("Z", "+00:00"))
    except ValueError:
        return None


def _check_limits(keep_last: int | None, keep_days: float | None) -> None:
    if keep_last is None and keep_days is None:
        raise UsageError("say what to keep: --keep-last N and/or --keep-days D")
    if (keep_last is not None and keep_last < 0) or (keep_days is not None and keep_days < 0):
        raise UsageError("--keep-last and --keep-days cannot be negative")


def plan_gc(store: Store, keep_last: int | None = None, keep_days: float | None = None,
            now: datetime | None = None, alive: Callable[[Pin], bool] = process_alive) -> GcPlan:
    """Which snapshots a collection with these limits removes (UsageError when no limit is given)."""
    _check_limits(keep_last, keep_days)
    pinned = pins(store, alive)
    cutoff = (now or datetime.now(timezone.utc)) - timedelta(days=keep_days) if keep_days is not None else None
    plan, seen_per_host = GcPlan(), dict[str, int]()
    for entry in store.entries():  # newest first
        rank = seen_per_host.get(entry.host, 0)
        seen_per_host[entry.host] = rank + 1
        why = [reason for key, reasons in pinned.items() if entry.id.startswith(key) for reason in reasons]
        if rank == 0:  # a host's latest state stays, however old: it is what the next diff starts from
            why.append(f"newest of {entry.host}")
        elif keep_last is not None and rank < keep_last:
            why.append(f"newest {keep_last} of {entry.host}")
        created = _created(entry)
        if cutoff is not None and (created is None or created >= cutoff):
            why.append(f"younger than {keep_days:g} days" if created else "unreadable time")
        if why:
            plan.keep.append((entry, why))
        else:
            plan.remove.append(entry)
    return plan


@contextmanager
def _baselines_locked(store: Store) -> Iterator[None]:
    """The baselines' lock, or a one-line error naming why it cannot be taken (a read-only or full disk)."""
    try:
        lock = NamedSnapshots(store).locked()
        lock.__enter__()
    except OSError as exc:
        raise DriftcheckError(f"cannot collect garbage in {store.path.parent}: "
                              f"{write_failure(exc, store.path) or exc}") from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def collect(store: Store, keep_last: int | None = None, keep_days: float | None = None,
            dry_run: bool = False, local_host: str | None = None,
            exists: Callable[[str], bool] = os.path.exists) -> GcResult:
    """Remove what `plan_gc` says, drop hash cache rows of `local_host` whose files are gone, and give
    the space back to the file system. With `dry_run` nothing changes."""
    before = store.size_bytes()
    if dry_run:
        return GcResult(plan_gc(store, keep_last, keep_days), 0, 0, before, before, True)
    _check_limits(keep_last, keep_days)  # said before the store is locked
    # Plan and delete in one transaction, no baseline saved meanwhile: nothing new can slip in between.
    with _baselines_locked(store), store.write_lock() as db:
        drop_ended_pins(db)
        plan = plan_gc(store, keep_last, keep_days)
        removed = store.remove([entry.id for entry in plan.remove])
    dropped = HashCache(store.path).forget_missing(local_host, exists) if local_host and store.path.exists() else 0
    if removed:
        store.compact()
    return GcResult(plan, removed, dropped, before, store.size_bytes(), False)
