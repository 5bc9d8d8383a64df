"""File hashes remembered between snapshots, so a repeat snapshot rehashes nothing unchanged.

Kept in the snapshot store's SQLite file, in its own table. One row per (host, path): the identity the
file had when last seen (size, mtime_ns, inode) and its sha256 if it was hashed. A hash is reused only
while all of size, mtime_ns and inode are unchanged; a file rewritten in place, even at the same size,
gets a new mtime and is hashed again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import DriftcheckError
from driftcheck.snapshot.home import data_dir
from driftcheck.snapshot.model import utc_now
from driftcheck.store.database import STORE_FILE, open_database


@dataclass(frozen=True)
class FileIdentity:
    """What a stat says about a file: if all three are unchanged, so is its content (for our purposes)."""

    size: int
    mtime_ns: int
    inode: int


@dataclass(frozen=True)
class CachedFile:
    """A file as last seen: its identity then, and its sha256 when it was hashed (None: only stat-checked)."""

    identity: FileIdentity
    sha256: str | None


class HashCache:
    """The `file_hashes` table of the store at `path` (default: the user's store)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / STORE_FILE

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return open_database(self.path, "hash cache in")

    def lookup(self, host: str) -> dict[str, CachedFile]:
        """Every file remembered for `host`, by path."""
        with self._connect() as db:
            rows = db.execute("SELECT path, size, mtime_ns, inode, sha256 FROM file_hashes WHERE host = ?",
                              (host,)).fetchall()
        return {path: CachedFile(FileIdentity(size, mtime_ns, inode), sha256)
                for path, size, mtime_ns, inode, sha256 in rows}

    def remember(self, host: str, files: Iterable[tuple[str, CachedFile]]) -> int:
        """Store (path, file) pairs for `host`, replacing what was known of those paths; returns how many."""
        now = utc_now()
        rows = [(host, path, f.identity.size, f.identity.mtime_ns, f.identity.inode, f.sha256, now)
                for path, f in files]
        if not rows:
            return 0
        try:
            with self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT OR REPLACE INTO file_hashes (host, path, size, mtime_ns, inode, sha256, "
                               "seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                db.execute("COMMIT")
        except DriftcheckError:
            return 0  # a store that cannot be written (read-only, full): the next snapshot hashes again, that is all
        return len(rows)

    def forget_missing(self, host: str, exists: Callable[[str], bool]) -> int:
        """Drop `host`'s rows whose file `exists` no longer finds; returns how many went."""
        gone = [(host, path) for path in self.lookup(host) if not exists(path)]
        if not gone:
            return 0
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("DELETE FROM file_hashes WHERE host = ? AND path = ?", gone)
            db.execute("COMMIT")
        return len(gone)
