"""The SQLite store: positions, id prefixes, and concurrent writers (real processes, real file)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from driftcheck.errors import TamperedSnapshotError, UnknownSnapshotError
from driftcheck.keys import load_signing_key
from driftcheck.snapshot.canonical import pretty_json
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.resolve import resolve_snapshot
from driftcheck.snapshot.signing import sign_document
from driftcheck.snapshot.store import Store

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
from driftcheck.snapshot.store import Store
store = Store(__import__("pathlib").Path(sys.argv[1]))
for i in range(25):
    store.add(Snapshot(new_document({"name": "w" + sys.argv[2], "kind": "local"}, {}, label=f"{sys.argv[2]}-{i}")))
"""


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
