"""The store's SQLite file: its name, its one schema (every table driftcheck keeps), and how to open it.

One owner for the schema, so a table is never created by the code that happens to touch the file first,
and gc, which must know every table that points at a snapshot, reads them from here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from driftcheck.errors import DriftcheckError
from driftcheck.snapshot.home import ensure_private_dir

STORE_FILE = "snapshots.db"

# snapshots: `document` holds the whole JSON text in stores written before deltas; now it is '' and
# `payload` holds the compressed document (base_seq NULL) or the compressed delta from snapshot `base_seq`.
# runs: one row per `driftcheck run`, pointing at the snapshots taken before and after it.
# file_hashes: the hash cache of the kernels probe, keyed by host and path.
# pins: snapshots a running process still needs before anything else points at them (store/pins.py):
# a `driftcheck run`'s "before" snapshot while its command runs.
SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    host TEXT NOT NULL,
    label TEXT,
    status_counts TEXT NOT NULL,
    document TEXT NOT NULL,
    boot_id TEXT,
    base_seq INTEGER,
    run_pos INTEGER NOT NULL DEFAULT 0,
    payload BLOB,
    probe_set TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT,
    command TEXT NOT NULL,
    cwd TEXT NOT NULL,
    host TEXT NOT NULL,
    started_at TEXT NOT NULL,
    duration_s REAL NOT NULL,
    exit_code INTEGER NOT NULL,
    signal TEXT,
    snapshot_id TEXT,
    after_snapshot_id TEXT,
    metrics TEXT NOT NULL,
    telemetry TEXT NOT NULL,
    telemetry_series TEXT
);
CREATE INDEX IF NOT EXISTS runs_snapshot ON runs(snapshot_id);
CREATE INDEX IF NOT EXISTS runs_after_snapshot ON runs(after_snapshot_id);
CREATE TABLE IF NOT EXISTS file_hashes (
    host TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    sha256 TEXT,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (host, path)
);
CREATE TABLE IF NOT EXISTS pins (
    snapshot_id TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    since TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, host, pid)
);
"""
# Columns of run records that point at snapshots: gc keeps what they name.
RUN_SNAPSHOT_COLUMNS = ("snapshot_id", "after_snapshot_id")


@contextmanager
def open_database(path: Path, what: str) -> Iterator[sqlite3.Connection]:
    """A connection to the store's SQLite file with every table of `SCHEMA` ensured.

    Errors become one-line DriftcheckErrors.

    A generous busy timeout plus WAL: concurrent driftcheck processes queue, never corrupt the file.
    """
    ensure_private_dir(path.parent)
    try:
        connection = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise DriftcheckError(f"cannot open the {what} {path}: {exc}") from None
    try:
        connection.execute("PRAGMA busy_timeout = 60000")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript(SCHEMA)
        yield connection
    except sqlite3.DatabaseError as exc:
        raise DriftcheckError(f"{what} {path}: {exc}") from None
    finally:
        connection.close()
