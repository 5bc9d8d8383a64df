"""The store's SQLite file: its name, its one schema (every table driftcheck keeps), and how to open it.

One owner for the schema, so a table is never created by the code that happens to touch the file first,
and gc, which must know every table that points at a snapshot, reads them from here.
"""

from __future__ import annotations

import errno
import os
import re
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
# bench_sessions: per benchmark, the run medians of each record of one unchanged state (a baseline's sessions,
# the checks that passed against it), which measure how far this host's speed moves between sessions
# (store/sessions.py). A copy of the figures, so gc keeps no snapshot for it.
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
CREATE TABLE IF NOT EXISTS bench_sessions (
    host TEXT NOT NULL,
    suite TEXT NOT NULL,
    device TEXT NOT NULL,
    state TEXT NOT NULL,
    session TEXT NOT NULL,
    taken_at TEXT NOT NULL,
    name TEXT NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (state, session, name)
);
CREATE INDEX IF NOT EXISTS bench_sessions_host ON bench_sessions(host, suite, device);
"""
# Columns of run records that point at snapshots: gc keeps what they name.
RUN_SNAPSHOT_COLUMNS = ("snapshot_id", "after_snapshot_id")


_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (?P<name>\w+) (?P<body>\(.*?\n\));", re.S)
# SQLite's words for a write that the file system refused.
_FULL = "database or disk is full"
_READ_ONLY = ("attempt to write a readonly database", "readonly database")


def mount_point(path: Path) -> Path:
    """The mount point of the file system holding `path` (or its nearest existing ancestor): the longest
    mount of /proc/self/mounts above it (a bind mount shares its device with its source: `ismount` misses
    it), else the nearest directory `os.path.ismount` says is one."""
    current = Path(os.path.realpath(path))
    while not current.exists() and current != current.parent:
        current = current.parent
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as mounts:
            points = [Path(line.split()[1].replace("\\040", " ")) for line in mounts if len(line.split()) > 1]
        above = [point for point in points if current == point or point in current.parents]
        if above:
            return max(above, key=lambda point: len(point.parts))
    except OSError:
        pass
    while not os.path.ismount(current) and current != current.parent:
        current = current.parent
    return current


def write_failure(exc: BaseException, path: Path) -> str | None:
    """The cause of a failed write to `path` in a few words ("no space left on /mnt/data", "read-only
    file system at /", "permission denied"), or None when `exc` is no write failure."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on {mount_point(path)} (the file system holding {path})"
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return f"read-only file system at {mount_point(path)}"
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied writing {exc.filename or path}"
    message = str(exc).lower()
    if isinstance(exc, sqlite3.Error) and (_FULL in message or "disk i/o error" in message and _disk_full(path)):
        return f"no space left on {mount_point(path)} (the file system holding {path})"
    if isinstance(exc, sqlite3.Error) and any(words in message for words in _READ_ONLY):
        return _why_read_only(path)
    return None


def _why_read_only(path: Path) -> str:
    """Why a store opened read-only cannot be written: a full disk (opened so to be read at all), a read-only
    file system, or permissions."""
    mount = mount_point(path)
    if _disk_full(path):
        return f"no space left on {mount} (the file system holding {path})"
    try:
        if os.statvfs(_existing(path)).f_flag & os.ST_RDONLY:
            return f"read-only file system at {mount}"
    except OSError:
        pass
    return f"read-only: permission denied writing {path if path.exists() else path.parent}"


def _disk_full(path: Path) -> bool:
    """Whether the file system holding `path` has (next to) no room left: a write-ahead-log write that found
    no room is reported as an I/O error, which may also be something else."""
    try:
        stats = os.statvfs(_existing(path))
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 1024 * 1024


def _existing(path: Path) -> Path:
    """`path`, or its nearest ancestor that exists."""
    return next((p for p in (path, *path.parents) if p.exists()), Path("/"))


def writable(path: Path) -> bool:
    """Whether the store file `path` can be written here: the file, when it exists, and its directory (the
    write-ahead log lives beside it); for a store not made yet, the directory it would be made in."""
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    existing = next((p for p in (path.parent, *path.parent.parents) if p.exists()), None)
    return existing is not None and os.access(existing, os.W_OK)


def _shadow_missing_tables(connection: sqlite3.Connection) -> None:
    """Stand-ins, empty and in memory, for the tables of `SCHEMA` a store that cannot be written lacks (an
    older store without `pins`): reading them finds nothing rather than failing."""
    connection.execute("PRAGMA temp_store = MEMORY")
    present = {row[0] for row in connection.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")}
    for table in _TABLE.finditer(SCHEMA):
        if table.group("name") not in present:
            connection.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table.group('name')} {table.group('body')}")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection: `mode=ro`, else (a write-ahead-log store on a read-only file system, where
    SQLite cannot make its shared-memory file) `immutable=1`; a store not made yet reads as empty."""
    if not path.exists():
        connection = sqlite3.connect(":memory:", isolation_level=None)
        connection.executescript(SCHEMA)
        return connection
    uri = Path(os.path.abspath(path)).as_uri()
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        connection = sqlite3.connect(f"{uri}?{flags}", uri=True, timeout=60.0, isolation_level=None)
        try:
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            connection.close()
            continue
        _shadow_missing_tables(connection)
        return connection
    raise sqlite3.OperationalError("unable to open database file")


def _connect(path: Path) -> sqlite3.Connection:
    """A read-write connection, schema ensured; where that needs a write the disk refuses (full), a
    read-only one, so that reading still works and a write says why it cannot."""
    try:
        ensure_private_dir(path.parent)
        connection = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    except (OSError, sqlite3.OperationalError) as exc:
        if write_failure(exc, path) is None:
            raise
        return _connect_read_only(path)
    try:
        connection.execute("PRAGMA busy_timeout = 60000")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript(SCHEMA)
    except sqlite3.OperationalError as exc:
        connection.close()
        if write_failure(exc, path) is None:
            raise
        return _connect_read_only(path)
    return connection


@contextmanager
def open_database(path: Path, what: str) -> Iterator[sqlite3.Connection]:
    """A connection to the store's SQLite file with every table of `SCHEMA` ensured.

    A generous busy timeout plus WAL: concurrent driftcheck processes queue, never corrupt the file. A
    store that cannot be written here (a read-only file or file system, a directory of another user) is
    opened read-only, so `log`, `show`, `diff`, `explain` and `runs` still work; a write to it, or to a
    full disk, fails with one line that names the cause. Errors become one-line DriftcheckErrors.
    """
    try:
        connection = _connect(path) if writable(path) else _connect_read_only(path)
    except (sqlite3.Error, OSError) as exc:
        cause = write_failure(exc, path) or str(exc)
        raise DriftcheckError(f"cannot open the {what} {path}: {cause}") from None
    try:
        yield connection
    except sqlite3.DatabaseError as exc:
        failure = write_failure(exc, path)
        raise DriftcheckError(f"cannot write the {what} {path}: {failure}" if failure else f"{what} {path}: {exc}") \
            from None
    finally:
        connection.close()
