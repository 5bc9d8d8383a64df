"""The local snapshot store: one SQLite file under the data dir, safe for concurrent writers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import DriftcheckError, UnknownSnapshotError
from driftcheck.paths import data_dir, ensure_private_dir
from driftcheck.snapshot.canonical import canonical_bytes
from driftcheck.snapshot.model import Snapshot, parse_snapshot

STORE_FILE = "snapshots.db"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    host TEXT NOT NULL,
    label TEXT,
    status_counts TEXT NOT NULL,
    document TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS snapshots_id ON snapshots(id);
"""


@dataclass(frozen=True)
class StoredSnapshot:
    """One row of `driftcheck log`."""

    seq: int
    id: str
    created_at: str
    host: str
    label: str | None
    status_counts: dict[str, int]


@contextmanager
def open_database(path: Path, schema: str, what: str) -> Iterator[sqlite3.Connection]:
    """A connection to the store's SQLite file with `schema` ensured; errors become one-line DriftcheckErrors.

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
        connection.executescript(schema)
        yield connection
    except sqlite3.DatabaseError as exc:
        raise DriftcheckError(f"{what} {path}: {exc}") from None
    finally:
        connection.close()


class Store:
    """Snapshots kept by `driftcheck snapshot`, addressable by id prefix and by position (@latest...)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / STORE_FILE

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return open_database(self.path, _SCHEMA, "snapshot store")

    def add(self, snapshot: Snapshot) -> str:
        """Keep `snapshot`; returns its id. Adding the same snapshot twice keeps one copy."""
        document = canonical_bytes(snapshot.document).decode("utf-8")
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO snapshots (id, created_at, host, label, status_counts, document) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (snapshot.id, snapshot.created_at, snapshot.host_name, snapshot.label,
                 json.dumps(snapshot.status_counts()), document))
        return snapshot.id

    def entries(self, limit: int | None = None) -> list[StoredSnapshot]:
        """Stored snapshots, newest first."""
        query = "SELECT seq, id, created_at, host, label, status_counts FROM snapshots ORDER BY seq DESC"
        params: tuple[int, ...] = ()
        if limit is not None:
            query += " LIMIT ?"
            params = (limit,)
        with self._connect() as db:
            rows = db.execute(query, params).fetchall()
        return [StoredSnapshot(seq, sid, created, host, label, json.loads(counts))
                for seq, sid, created, host, label, counts in rows]

    def _load_row(self, snapshot_id: str) -> Snapshot:
        with self._connect() as db:
            row = db.execute("SELECT document FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()
        if row is None:
            raise UnknownSnapshotError(snapshot_id, "no such snapshot in the store")
        return parse_snapshot(row[0], f"store:{snapshot_id[:12]}")

    def nth_newest(self, n: int) -> Snapshot:
        """The n-th newest snapshot (0 = latest)."""
        with self._connect() as db:
            row = db.execute("SELECT id FROM snapshots ORDER BY seq DESC LIMIT 1 OFFSET ?", (n,)).fetchone()
            count = db.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0]
        if row is None:
            raise UnknownSnapshotError(f"@{n}", f"the store holds {count} snapshot(s)"
                                       + ("; take one with `driftcheck snapshot`" if count == 0 else ""))
        return self._load_row(row[0])

    def by_prefix(self, prefix: str) -> Snapshot:
        """The one snapshot whose id starts with `prefix`."""
        if not prefix or any(c not in "0123456789abcdef" for c in prefix.lower()):
            raise UnknownSnapshotError(prefix, "neither a file nor a snapshot id")
        with self._connect() as db:
            rows = db.execute("SELECT id FROM snapshots WHERE id LIKE ? LIMIT 3",
                              (prefix.lower() + "%",)).fetchall()
        if not rows:
            raise UnknownSnapshotError(prefix, "no such file, and no stored snapshot has this id")
        if len(rows) > 1:
            raise UnknownSnapshotError(prefix, "ambiguous id prefix: matches "
                                       + ", ".join(r[0][:12] for r in rows) + "; give more characters")
        return self._load_row(rows[0][0])
