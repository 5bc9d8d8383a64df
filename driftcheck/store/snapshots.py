"""The local snapshot store: one SQLite file under the data dir, safe for concurrent writers, kept small.

A machine snapshotted every day repeats itself: the store keeps each snapshot as compressed canonical
JSON, the first of a host (and set of probes) whole and the others only as the delta
(`driftcheck.store.delta`) from an earlier one: the previous snapshot with the same probes, or, every
`RUN_LENGTH` snapshots, the start of the previous run, so reading one walks a short chain. A snapshot
whose delta would not be much smaller is kept whole. A store written before this layout (whole
documents as text) is converted in place the first time it is opened.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from driftcheck.errors import SnapshotError, TamperedSnapshotError, UnknownSnapshotError
from driftcheck.snapshot.canonical import canonical_bytes
from driftcheck.snapshot.home import data_dir
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.model import Snapshot, parse_snapshot, validate_document
from driftcheck.store.database import STORE_FILE, open_database
from driftcheck.store.delta import apply_delta, delta_tree, pack, unpack
from driftcheck.store.pins import Pin, add_pin, release_pins

# Deltas from the previous snapshot in one run, before the next delta goes back to the run's start.
RUN_LENGTH = 64
# A delta larger than this share of the whole compressed document is not worth a chain link.
DELTA_AT_MOST = 0.5

_ADDED_COLUMNS = (("boot_id", "TEXT"), ("base_seq", "INTEGER"), ("run_pos", "INTEGER NOT NULL DEFAULT 0"),
                  ("payload", "BLOB"), ("probe_set", "TEXT"))
_CHAIN = """
WITH RECURSIVE chain(seq, base_seq, payload, document, n) AS (
    SELECT seq, base_seq, payload, document, 0 FROM snapshots WHERE seq = ?
    UNION ALL
    SELECT s.seq, s.base_seq, s.payload, s.document, c.n + 1 FROM snapshots s JOIN chain c ON s.seq = c.base_seq
)
SELECT base_seq, payload, document FROM chain ORDER BY n DESC
"""
_WHOLE_SIZE = """
WITH RECURSIVE chain(seq, base_seq, size) AS (
    SELECT seq, base_seq, length(payload) FROM snapshots WHERE seq = ?
    UNION ALL
    SELECT s.seq, s.base_seq, length(s.payload) FROM snapshots s JOIN chain c ON s.seq = c.base_seq
)
SELECT size FROM chain WHERE base_seq IS NULL
"""
# The snapshot a run of deltas started from: the first one up the chain with run position 0.
_RUN_START = """
WITH RECURSIVE chain(seq, base_seq, run_pos) AS (
    SELECT seq, base_seq, run_pos FROM snapshots WHERE seq = ?
    UNION ALL
    SELECT s.seq, s.base_seq, s.run_pos FROM snapshots s JOIN chain c ON s.seq = c.base_seq WHERE c.run_pos > 0
)
SELECT seq FROM chain WHERE run_pos = 0
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
    boot_id: str | None = None
    # The boot id of the host's snapshot before this one (the last that recorded one).
    previous_boot_id: str | None = None

    @property
    def new_boot(self) -> bool:
        """Whether the host rebooted between its previous snapshot and this one."""
        return bool(self.boot_id and self.previous_boot_id and self.boot_id != self.previous_boot_id)


@dataclass(frozen=True)
class BootPoints:
    """A host's current boot in the store: its id, its first snapshot (@boot), the newest before it
    (@before-boot); None where the store holds no such snapshot."""

    host: str
    boot_id: str | None
    first_id: str | None
    before_id: str | None


def probe_set_of(document: Mapping[str, object]) -> str:
    """The names of the probes a snapshot holds, as one string: snapshots alike in it delta well."""
    probes = document.get("probes")
    return ",".join(sorted(probes)) if isinstance(probes, dict) else ""


def boot_id_of(document: Mapping[str, object]) -> str | None:
    """The kernel boot id a snapshot recorded (system probe), or None when it holds none."""
    probes = document.get("probes")
    outcome = probes.get("system") if isinstance(probes, dict) else None
    data = outcome.get("data") if isinstance(outcome, dict) and outcome.get("status") == "ok" else None
    value = data.get("boot_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def _columns(db: sqlite3.Connection) -> set[str]:
    return {row[1] for row in db.execute("PRAGMA table_info(snapshots)")}


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error: writers queue on the busy timeout. Inside a
    transaction already open (`Store.write_lock`), its work simply joins that one."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class Store:
    """Snapshots kept by `driftcheck snapshot`, addressable by id prefix and by position (@latest...)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / STORE_FILE
        self._held: sqlite3.Connection | None = None

    @contextmanager
    def write_lock(self) -> Iterator[sqlite3.Connection]:
        """Hold the store's write lock (BEGIN IMMEDIATE ... COMMIT): until it is left, every method of this
        Store works inside that one transaction, and no other writer can change the store between what
        is read and what is written (gc's plan and its deletes)."""
        with self._connect() as db, _transaction(db):
            self._held = db
            try:
                yield db
            finally:
                self._held = None

    def database(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection to the store's file, schema ensured: inside `write_lock`, the one holding the lock."""
        return self._connect()

    def release(self, snapshot_ids: Sequence[str], pin: Pin) -> None:
        """Drop `pin`'s hold on `snapshot_ids` (a run that ends without a record)."""
        with self._connect() as db, _transaction(db):
            release_pins(db, snapshot_ids, pin)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if self._held is not None:
            yield self._held
            return
        with open_database(self.path, "snapshot store") as db:
            columns = _columns(db)
            if "payload" not in columns:
                self._migrate(db)
            elif "probe_set" not in columns:
                self._add_probe_sets(db)
            yield db

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Convert a store of whole JSON documents to the compressed, delta-encoded layout, in place."""
        with _transaction(db):
            if "payload" in _columns(db):  # another process converted it while we waited
                return
            for name, kind in _ADDED_COLUMNS:
                db.execute(f"ALTER TABLE snapshots ADD COLUMN {name} {kind}")
            # The UNIQUE constraint already indexes `id`; the old second index only cost space.
            db.execute("DROP INDEX IF EXISTS snapshots_id")
            seqs = [row[0] for row in db.execute("SELECT seq FROM snapshots ORDER BY seq")]
            for seq in seqs:
                text = db.execute("SELECT document FROM snapshots WHERE seq = ?", (seq,)).fetchone()[0]
                try:
                    document = parse_snapshot(text, f"store row {seq}").document
                except SnapshotError:
                    continue  # a damaged row stays as it was: reading it says so, the others convert
                self._write_encoding(db, seq, document)

    def _add_probe_sets(self, db: sqlite3.Connection) -> None:
        """Record which probes each snapshot holds, in a store written before deltas chose bases by them."""
        with _transaction(db):
            if "probe_set" in _columns(db):
                return
            db.execute("ALTER TABLE snapshots ADD COLUMN probe_set TEXT")
            for (seq,) in db.execute("SELECT seq FROM snapshots WHERE payload IS NOT NULL").fetchall():
                db.execute("UPDATE snapshots SET probe_set = ? WHERE seq = ?",
                           (probe_set_of(self._decode(db, seq)), seq))

    def _decode(self, db: sqlite3.Connection, seq: int) -> JSONObject:
        """The document of row `seq`: its whole snapshot with every delta on the way applied."""
        document: JSONObject | None = None
        try:
            for base_seq, payload, text in db.execute(_CHAIN, (seq,)).fetchall():
                if payload is None:  # a row an older driftcheck wrote and the conversion could not read
                    document = parse_snapshot(text, f"store row {seq}").document
                elif base_seq is None:
                    document = json.loads(unpack(payload))
                elif document is None:
                    raise ValueError("the snapshot its delta rests on is gone")
                else:
                    document = apply_delta(document, json.loads(unpack(payload)))
        except (ValueError, zlib.error) as exc:
            raise SnapshotError(f"{self.path} row {seq}", f"damaged in the store ({exc})") from None
        if not isinstance(document, dict):
            raise SnapshotError(f"{self.path} row {seq}", "missing or damaged in the store")
        return document

    def _encode(self, db: sqlite3.Connection, document: JSONObject, host: str, before_seq: int | None,
                avoid: set[int] | frozenset[int] = frozenset()) -> tuple[int | None, int, bytes]:
        """(base_seq, run, payload) for `document`: a delta when that is small and exact, else the whole.

        The base is the host's previous snapshot with the same probes (a cheap `check` snapshot between
        two full ones would otherwise make every full one a large delta), until a run of RUN_LENGTH
        deltas is complete; then it is the snapshot that run started from, so a read crosses at most
        RUN_LENGTH deltas plus one per earlier run, and the store holds one whole document per host and
        set of probes, not one per run. Rows in `avoid` (about to be deleted) are never a base.
        """
        query = "SELECT seq, run_pos FROM snapshots WHERE host = ? AND probe_set = ? AND payload IS NOT NULL"
        params: tuple[str | int, ...] = (host, probe_set_of(document))
        if before_seq is not None:
            query += " AND seq < ?"
            params += (before_seq,)
        previous = next((row for row in db.execute(query + " ORDER BY seq DESC", params) if row[0] not in avoid),
                        None)
        if previous is None:
            return None, 0, pack(document)
        base_seq, run = previous[0], previous[1] + 1
        if run >= RUN_LENGTH or avoid:  # a re-stored snapshot starts a run: no run start to look up
            base_seq, run = db.execute(_RUN_START, (previous[0],)).fetchone()[0], 0
        base = self._decode(db, base_seq)
        delta = delta_tree(base, document)
        payload = pack(delta)
        # Measured against the chain's whole document, already compressed: no need to compress this one.
        whole_size = db.execute(_WHOLE_SIZE, (base_seq,)).fetchone()[0] or 0
        if len(payload) > DELTA_AT_MOST * whole_size:
            return None, 0, pack(document)
        # Rely on a delta only once it has been shown to give back these exact bytes (`base` is ours to change).
        if canonical_bytes(apply_delta(base, delta)) != canonical_bytes(document):
            return None, 0, pack(document)
        return base_seq, run, payload

    def _write_encoding(self, db: sqlite3.Connection, seq: int, document: JSONObject) -> None:
        base_seq, run_pos, payload = self._encode(db, document, _host_name(document), seq)
        db.execute("UPDATE snapshots SET document = '', boot_id = ?, base_seq = ?, run_pos = ?, payload = ?, "
                   "probe_set = ? WHERE seq = ?",
                   (boot_id_of(document), base_seq, run_pos, payload, probe_set_of(document), seq))

    def add(self, snapshot: Snapshot, pin: Pin | None = None) -> str:
        """Keep `snapshot`; returns its id. Adding the same snapshot twice keeps one copy. With `pin`, the
        snapshot is pinned for that process in the same transaction: gc cannot take it in between."""
        document = snapshot.document
        with self._connect() as db, _transaction(db):
            if pin is not None:
                add_pin(db, snapshot.id, pin)
            if db.execute("SELECT 1 FROM snapshots WHERE id = ?", (snapshot.id,)).fetchone():
                return snapshot.id
            base_seq, run_pos, payload = self._encode(db, document, snapshot.host_name, None)
            db.execute(
                "INSERT INTO snapshots (id, created_at, host, label, status_counts, document, boot_id, base_seq, "
                "run_pos, payload, probe_set) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?)",
                (snapshot.id, snapshot.created_at, snapshot.host_name, snapshot.label,
                 json.dumps(snapshot.status_counts()), boot_id_of(document), base_seq, run_pos, payload,
                 probe_set_of(document)))
        return snapshot.id

    def entries(self, limit: int | None = None) -> list[StoredSnapshot]:
        """Stored snapshots, newest first."""
        query = "SELECT seq, id, created_at, host, label, status_counts, boot_id FROM snapshots ORDER BY seq DESC"
        params: tuple[int, ...] = ()
        if limit is not None:
            query += " LIMIT ?"
            params = (limit,)
        with self._connect() as db:
            rows = db.execute(query, params).fetchall()
            boots = db.execute("SELECT seq, host, boot_id FROM snapshots WHERE boot_id IS NOT NULL ORDER BY seq")
            previous_boot: dict[int, str | None] = {}
            last_seen: dict[str, str] = {}
            for seq, host, boot in boots:
                previous_boot[seq] = last_seen.get(host)
                last_seen[host] = boot
        return [StoredSnapshot(seq, sid, created, host, label, self._status_counts(seq, counts), boot,
                               previous_boot.get(seq))
                for seq, sid, created, host, label, counts, boot in rows]

    def _status_counts(self, seq: int, counts: object) -> dict[str, int]:
        """A row's probe outcome counts; SnapshotError (one line) for a row damaged in the store."""
        try:
            decoded = json.loads(str(counts))
        except (ValueError, RecursionError):
            decoded = None
        if not isinstance(decoded, dict) or not all(isinstance(n, int) for n in decoded.values()):
            raise SnapshotError(f"{self.path} row {seq}", "damaged in the store (its probe outcome counts)")
        return {str(status): n for status, n in decoded.items()}

    def _load_row(self, db: sqlite3.Connection, snapshot_id: str) -> Snapshot:
        """The snapshot `snapshot_id`, read over `db`: the connection that found its id, so that a reference
        opens the store once (each opening ensures the schema and the WAL mode: ~0.5 ms)."""
        row = db.execute("SELECT seq FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()
        if row is None:
            raise UnknownSnapshotError(snapshot_id, "no such snapshot in the store")
        document = self._decode(db, row[0])
        # Validated as a file would be: a damaged row is a one-line error.
        source = f"store:{snapshot_id[:12]}"
        validate_document(document, source)
        # The id is the hash of the content: a row whose content no longer hashes to it was changed in the
        # file behind driftcheck's back, signed or not. The Snapshot's own id is the one checked, so it is
        # worked out once. (That check is no signature check: a row changed with its id changed too is caught
        # by the signature, which every reference is checked against when it is resolved.)
        snapshot = Snapshot(document, source)
        if snapshot.id != snapshot_id:
            raise TamperedSnapshotError(source, "its content no longer matches its id: the store row was "
                                                "changed after it was written")
        return snapshot

    def load(self, snapshot_id: str) -> Snapshot:
        """The stored snapshot with exactly this id."""
        with self._connect() as db:
            return self._load_row(db, snapshot_id)

    def nth_newest(self, n: int) -> Snapshot:
        """The n-th newest snapshot (0 = latest)."""
        with self._connect() as db:
            row = db.execute("SELECT id FROM snapshots ORDER BY seq DESC LIMIT 1 OFFSET ?", (n,)).fetchone()
            if row is not None:
                return self._load_row(db, row[0])
            count = db.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0]
        raise UnknownSnapshotError(f"@{n}", f"the store holds {count} snapshot(s)"
                                   + ("; take one with `driftcheck snapshot`" if count == 0 else ""))

    def by_prefix(self, prefix: str) -> Snapshot:
        """The one snapshot whose id starts with `prefix`."""
        if not prefix or any(c not in "0123456789abcdef" for c in prefix.lower()):
            raise UnknownSnapshotError(prefix, "neither a file nor a snapshot id")
        with self._connect() as db:
            rows = db.execute("SELECT id FROM snapshots WHERE id LIKE ? LIMIT 3",
                              (prefix.lower() + "%",)).fetchall()
            if len(rows) == 1:
                return self._load_row(db, rows[0][0])
        if not rows:
            raise UnknownSnapshotError(prefix, "no such file, and no stored snapshot has this id")
        raise UnknownSnapshotError(prefix, "ambiguous id prefix: matches "
                                   + ", ".join(r[0][:12] for r in rows) + "; give more characters")

    def newest_host(self, reference: str = "@latest") -> str:
        """The host of the newest snapshot; UnknownSnapshotError (naming `reference`) when the store is empty."""
        with self._connect() as db:
            row = db.execute("SELECT host FROM snapshots ORDER BY seq DESC LIMIT 1").fetchone()
        if row is None:
            raise UnknownSnapshotError(reference, "the store holds no snapshots; take one with `driftcheck snapshot`")
        return str(row[0])

    def boot_points(self, host: str) -> BootPoints:
        """Where `host`'s current boot begins in the store, and the newest snapshot from before it.

        The current boot id is the newest one recorded on the host (a snapshot without the system probe
        records none and is passed over).
        """
        with self._connect() as db:
            boot = db.execute("SELECT boot_id FROM snapshots WHERE host = ? AND boot_id IS NOT NULL "
                              "ORDER BY seq DESC LIMIT 1", (host,)).fetchone()
            if boot is None:
                return BootPoints(host, None, None, None)
            before = db.execute("SELECT seq, id FROM snapshots WHERE host = ? AND boot_id IS NOT NULL "
                                "AND boot_id != ? ORDER BY seq DESC LIMIT 1", (host, boot[0])).fetchone()
            # The first snapshot after the last one of another boot: this boot's first.
            first = db.execute("SELECT id FROM snapshots WHERE host = ? AND boot_id = ? AND seq > ? "
                               "ORDER BY seq LIMIT 1", (host, boot[0], before[0] if before else 0)).fetchone()
        return BootPoints(host, boot[0], first[0] if first else None, before[1] if before else None)

    def hosts(self) -> list[str]:
        """Every host with a stored snapshot."""
        with self._connect() as db:
            return [row[0] for row in db.execute("SELECT DISTINCT host FROM snapshots ORDER BY host")]

    def remove(self, ids: Sequence[str]) -> int:
        """Delete the snapshots `ids`; a kept snapshot whose delta rested on one is stored again, as a
        delta from an earlier kept one, or whole. Returns how many went."""
        if not ids:
            return 0
        with self._connect() as db, _transaction(db):
            doomed = {row[0] for chunk in _chunks(list(ids)) for row in db.execute(
                f"SELECT seq FROM snapshots WHERE id IN ({','.join('?' * len(chunk))})", chunk)}
            rows = db.execute("SELECT seq, base_seq FROM snapshots WHERE base_seq IS NOT NULL").fetchall()
            # Oldest first: an orphan re-stored becomes a safe base for the ones after it. Nothing is
            # deleted before the end, so every chain still decodes while this runs.
            for seq in sorted(seq for seq, base in rows if base in doomed and seq not in doomed):
                document = self._decode(db, seq)
                base_seq, run_pos, payload = self._encode(db, document, _host_name(document), seq, avoid=doomed)
                db.execute("UPDATE snapshots SET base_seq = ?, run_pos = ?, payload = ? WHERE seq = ?",
                           (base_seq, run_pos, payload, seq))
            for chunk in _chunks(sorted(doomed)):
                db.execute(f"DELETE FROM snapshots WHERE seq IN ({','.join('?' * len(chunk))})", chunk)
        return len(doomed)

    def size_bytes(self) -> int:
        """Bytes the store takes on disk (the SQLite file and its write-ahead log)."""
        return sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal"))
                   if p.exists())

    def compact(self) -> None:
        """Give the space of deleted rows back to the file system (VACUUM)."""
        with self._connect() as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("VACUUM")


def _host_name(document: JSONObject) -> str:
    """The host a stored document names (every stored document was validated: its host is an object)."""
    host = document["host"]
    return str(host.get("name", "?")) if isinstance(host, dict) else "?"


_Item = TypeVar("_Item")


def _chunks(items: list[_Item], size: int = 500) -> Iterator[list[_Item]]:
    """`items` in slices small enough for SQLite's limit on bound parameters."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


__all__ = ["RUN_LENGTH", "BootPoints", "Store", "StoredSnapshot", "boot_id_of"]
