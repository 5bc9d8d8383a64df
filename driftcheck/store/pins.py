"""Pins: snapshots a process still needs, kept from gc from the moment they are stored.

`driftcheck run` stores its "before" snapshot, then runs the command for minutes or days, and only then
writes the run record that points at it. Between the two, a `gc` in another shell would find the snapshot
unreferenced and delete it, and the record would point at nothing. So the snapshot is stored together
with a pin (table `pins` of the store's schema) naming the process that holds it; the record, once
written, pins it for good and the process's pin goes, in the same transaction. A pin whose process has
ended (killed before it wrote its record) pins nothing: gc drops it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from driftcheck.snapshot.model import utc_now


@dataclass(frozen=True)
class Pin:
    """Who holds a snapshot: a process on a host."""

    host: str
    pid: int

    @classmethod
    def this_process(cls) -> Pin:
        """The pin of the running process."""
        return cls(_this_host(), os.getpid())


def _this_host() -> str:
    # socket is imported here: every reader of the store imports this module, and only a pin asks the host
    # name (socket's import converts four enums, ~4 ms of `show` and `explain`).
    import socket

    return socket.gethostname()


def process_alive(pin: Pin) -> bool:
    """Whether the pinning process may still be running. A pin of another host cannot be checked from here
    and counts as alive; a pid reused by another process keeps a pin longer, never shorter."""
    if pin.host != _this_host():
        return True
    try:
        os.kill(pin.pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def add_pin(db: sqlite3.Connection, snapshot_id: str, pin: Pin) -> None:
    """Pin `snapshot_id` for `pin`'s process (in the caller's transaction: the one that stores the snapshot)."""
    db.execute("INSERT OR IGNORE INTO pins (snapshot_id, host, pid, since) VALUES (?, ?, ?, ?)",
               (snapshot_id, pin.host, pin.pid, utc_now()))


def release_pins(db: sqlite3.Connection, snapshot_ids: Iterable[str], pin: Pin) -> None:
    """Drop `pin`'s hold on `snapshot_ids` (in the caller's transaction: the one that writes what pins them
    for good, or after a failure that leaves nothing pointing at them)."""
    for snapshot_id in snapshot_ids:
        db.execute("DELETE FROM pins WHERE snapshot_id = ? AND host = ? AND pid = ?",
                   (snapshot_id, pin.host, pin.pid))


def _pins(db: sqlite3.Connection) -> list[tuple[str, Pin]]:
    rows = db.execute("SELECT snapshot_id, host, pid FROM pins").fetchall()
    return [(str(snapshot_id), Pin(str(host), int(pid))) for snapshot_id, host, pid in rows]


def live_pins(db: sqlite3.Connection, alive: Callable[[Pin], bool] = process_alive) -> dict[str, list[str]]:
    """Snapshot id -> why it stays (`in use by a run in progress (pid N on HOST)`), for every pin whose
    process is alive; the pins of ended processes pin nothing."""
    pinned: dict[str, list[str]] = {}
    for snapshot_id, pin in _pins(db):
        if alive(pin):
            pinned.setdefault(snapshot_id, []).append(f"in use by a run in progress (pid {pin.pid} on {pin.host})")
    return pinned


def drop_ended_pins(db: sqlite3.Connection, alive: Callable[[Pin], bool] = process_alive) -> int:
    """Delete the pins of processes that have ended (killed before they wrote their record); returns how many."""
    ended = [(snapshot_id, pin) for snapshot_id, pin in _pins(db) if not alive(pin)]
    for snapshot_id, pin in ended:
        release_pins(db, [snapshot_id], pin)
    return len(ended)
