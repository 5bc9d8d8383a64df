"""The SQLite store: positions, id prefixes, and concurrent writers (real processes, real file)."""

from __future__ import annotations

import copy
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from driftcheck.api.references import resolve_snapshot
from driftcheck.errors import SnapshotError, TamperedSnapshotError, UnknownSnapshotError
from driftcheck.snapshot.canonical import canonical_bytes, pretty_json
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.signing import sign_document, verify_document
from driftcheck.store.snapshots import RUN_LENGTH, Store

REPO_ROOT = Path(__file__).resolve().parents[2]


def _snapshot(label: str) -> Snapshot:
    return Snapshot(new_document({"name": "node", "kind": "local"}, {}, label=label))


def test_positions_and_prefixes(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ids = [store.add(_snapshot(f"n{i}")) for i in range(3)]
    assert resolve_snapshot("@latest", store).label == "n2"
    assert resolve_snapshot("@prev", store).label == "n1"
    assert resolve_snapshot("@2", store).label == "n0"
    assert resolve_snapshot(ids[0][:10], store).label == "n0"
    assert [e.label for e in store.entries()] == ["n2", "n1", "n0"]
    with pytest.raises(UnknownSnapshotError, match="holds 3"):
        resolve_snapshot("@3", store)
    with pytest.raises(UnknownSnapshotError, match="no such file"):
        resolve_snapshot("feedbeef", store)
    with pytest.raises(UnknownSnapshotError, match="unknown position"):
        resolve_snapshot("@newest", store)


def test_same_snapshot_twice_is_kept_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    snap = _snapshot("x")
    store.add(snap)
    store.add(snap)
    assert len(store.entries()) == 1


def test_ambiguous_prefix_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ids = [store.add(_snapshot(f"n{i}")) for i in range(17)]
    # 17 ids over 16 hex digits: by pigeonhole some first digit is shared.
    first = next(c for c in "0123456789abcdef" if sum(i[0] == c for i in ids) >= 2)
    with pytest.raises(UnknownSnapshotError, match="ambiguous"):
        resolve_snapshot(first, store)


def test_tampered_file_is_refused_on_load(tmp_path: Path) -> None:
    signed = sign_document(new_document({"name": "n", "kind": "local"}, {}, label="a"), load_signing_key())
    signed["label"] = "b"
    path = tmp_path / "t.json"
    path.write_text(pretty_json(signed))
    with pytest.raises(TamperedSnapshotError, match="altered"):
        resolve_snapshot(str(path), Store(tmp_path / "s.db"))
    assert resolve_snapshot(str(path), Store(tmp_path / "s.db"), check_signature=False).label == "b"


_WRITER = """
import sys
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.store.snapshots import Store
store = Store(__import__("pathlib").Path(sys.argv[1]))
for i in range(25):
    store.add(Snapshot(new_document({"name": "w" + sys.argv[2], "kind": "local"}, {}, label=f"{sys.argv[2]}-{i}")))
"""


@pytest.mark.slow  # real writer processes
def test_concurrent_writers_do_not_corrupt_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(db), str(n)], cwd=REPO_ROOT)
               for n in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    entries = Store(db).entries()
    assert len(entries) == 100
    assert len({e.label for e in entries}) == 100
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# The layout every store had before deltas (driftcheck 0.1.0), byte for byte.
_OLD_SCHEMA = """
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
PAIRS = REPO_ROOT / "tests" / "data" / "pairs"


def _signed_day(document: dict[str, Any], day: int) -> Snapshot:
    doc = copy.deepcopy(document)
    doc.pop("signature", None)
    doc["created_at"] = f"2027-01-{1 + day % 28:02d}T03:00:00.{day:06d}Z"
    doc["probes"]["system"]["data"]["uptime_s"] = 86400.0 * day + 0.5
    doc["probes"]["env"]["data"]["vars"][f"DAY_{day % 3}"] = str(day)
    return Snapshot(sign_document(doc, load_signing_key()))


def test_an_old_store_opens_reads_and_is_converted(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    snapshots = [_signed_day(base, day) for day in range(3)]
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript(_OLD_SCHEMA)
        for snap in snapshots:
            db.execute("INSERT INTO snapshots (id, created_at, host, label, status_counts, document) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (snap.id, snap.created_at, snap.host_name, snap.label,
                                                     json.dumps(snap.status_counts()), pretty_json(snap.document)))
    store = Store(path)
    assert [e.id for e in store.entries()] == [s.id for s in reversed(snapshots)]
    for snap in snapshots:
        again = resolve_snapshot(snap.id, store)
        assert canonical_bytes(again.document) == canonical_bytes(snap.document)
        assert verify_document(again.document).intact
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT document, base_seq, payload IS NOT NULL FROM snapshots ORDER BY seq").fetchall()
        indexes = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")]
    assert [(text, base is not None, packed) for text, base, packed in rows] == \
        [("", False, True), ("", True, True), ("", True, True)]
    assert "snapshots_id" not in indexes  # the UNIQUE constraint's own index is enough
    store.add(_signed_day(base, 3))  # and it goes on as a new store
    assert len(Store(path).entries()) == 4


def test_signatures_verify_after_a_round_trip_through_the_delta_store(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    store = Store(tmp_path / "s.db")
    days = [_signed_day(base, day) for day in range(RUN_LENGTH * 2 + 5)]  # across two full runs of deltas
    for snap in days:
        store.add(snap)
    for n, snap in enumerate(reversed(days)):
        again = store.nth_newest(n)
        assert again.id == snap.id
        assert canonical_bytes(again.document) == canonical_bytes(snap.document)
        assert verify_document(again.document).intact, n
    with sqlite3.connect(tmp_path / "s.db") as db:
        whole = db.execute("SELECT COUNT(*) FROM snapshots WHERE base_seq IS NULL").fetchone()[0]
        longest = db.execute("SELECT MAX(run_pos) FROM snapshots").fetchone()[0]
    assert whole == 1 and longest == RUN_LENGTH - 1
    empty = Store(tmp_path / "empty.db")
    empty.entries()  # the file with every table of the schema, and no row
    assert store.size_bytes() - empty.size_bytes() < 10 * len(canonical_bytes(days[0].document))


def test_removing_snapshots_keeps_every_other_readable(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    store = Store(tmp_path / "s.db")
    days = [_signed_day(base, day) for day in range(12)]
    for snap in days:
        store.add(snap)
    doomed = [days[0].id, days[5].id, days[6].id, days[11].id]  # the whole one, a middle run, the newest
    assert store.remove(doomed) == 4
    kept = [snap for snap in days if snap.id not in doomed]
    assert [e.id for e in store.entries()] == [s.id for s in reversed(kept)]
    for snap in kept:
        assert verify_document(store.load(snap.id).document).intact
    store.compact()
    store.add(_signed_day(base, 12))  # the chain goes on from what is left
    assert verify_document(store.nth_newest(0).document).intact
    assert store.remove([]) == 0


def test_an_old_store_with_a_damaged_row_still_opens(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    good = _signed_day(base, 0)
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript(_OLD_SCHEMA)
        db.execute("INSERT INTO snapshots (id, created_at, host, label, status_counts, document) "
                   "VALUES ('ab' || substr(hex(randomblob(31)), 1, 62), 'then', 'node', NULL, '{}', '{\"trunc')")
        db.execute("INSERT INTO snapshots (id, created_at, host, label, status_counts, document) "
                   "VALUES (?, ?, ?, ?, '{}', ?)", (good.id, good.created_at, good.host_name, good.label,
                                                    pretty_json(good.document)))
    store = Store(path)
    assert len(store.entries()) == 2
    assert verify_document(store.nth_newest(0).document).intact
    with pytest.raises(SnapshotError, match="truncated"):
        store.nth_newest(1)


def _cheap(document: dict[str, Any], day: int) -> Snapshot:
    """What `driftcheck check` keeps between two full snapshots: a few cheap probes."""
    doc = copy.deepcopy(document)
    doc["probes"] = {name: doc["probes"][name] for name in ("env", "system")}
    doc["label"] = "driftcheck check"
    return _signed_day(doc, day)


def test_cheap_check_snapshots_in_between_do_not_break_the_chain_of_full_ones(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    store = Store(tmp_path / "s.db")
    days = [maker(base, day) for day in range(8) for maker in (_signed_day, _cheap)]
    for snap in days:
        store.add(snap)
    with sqlite3.connect(tmp_path / "s.db") as db:
        whole = db.execute("SELECT label FROM snapshots WHERE base_seq IS NULL ORDER BY seq").fetchall()
    assert whole == [(None,), ("driftcheck check",)]  # the first of each kind, and no other
    for snap in days:
        assert verify_document(store.load(snap.id).document).intact


def test_a_store_from_before_probe_sets_gets_them(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    path = tmp_path / "s.db"
    days = [_signed_day(base, 0), _cheap(base, 1)]
    for snap in days:
        Store(path).add(snap)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE snapshots DROP COLUMN probe_set")
    store = Store(path)
    store.add(_signed_day(base, 2))
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT probe_set, base_seq FROM snapshots ORDER BY seq").fetchall()
    assert rows[1][0] == "env,system" and rows[2] == (rows[0][0], 1)
    assert all(verify_document(store.nth_newest(n).document).intact for n in range(3))


def test_removing_the_oldest_keeps_the_rest_as_deltas(tmp_path: Path) -> None:
    base = json.loads((PAIRS / "base.json").read_text("utf-8"))
    store = Store(tmp_path / "s.db")
    days = [_signed_day(base, day) for day in range(20)]
    for snap in days:
        store.add(snap)
    store.compact()
    before = store.size_bytes()
    assert store.remove([snap.id for snap in days[:5]] + [days[9].id]) == 6
    store.compact()
    with sqlite3.connect(tmp_path / "s.db") as db:
        whole = db.execute("SELECT COUNT(*) FROM snapshots WHERE base_seq IS NULL").fetchone()[0]
    assert whole == 1  # the first kept one; every other kept one is still a delta
    assert store.size_bytes() <= before
    for snap in days[5:9] + days[10:]:
        assert canonical_bytes(store.load(snap.id).document) == canonical_bytes(snap.document)


def test_an_unsigned_row_changed_in_the_file_is_refused_on_load(tmp_path: Path) -> None:
    from driftcheck.store.delta import pack, unpack

    store = Store(tmp_path / "s.db")
    snapshot_id = store.add(_snapshot("honest"))
    with sqlite3.connect(tmp_path / "s.db") as db:
        payload = db.execute("SELECT payload FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()[0]
        document = json.loads(unpack(payload))
        document["label"] = "forged"
        db.execute("UPDATE snapshots SET payload = ? WHERE id = ?", (pack(document), snapshot_id))
    with pytest.raises(TamperedSnapshotError, match="no longer matches its id"):
        store.load(snapshot_id)
