"""Stored snapshots read back for a comparison: each one's content is serialised, hashed and its signature
checked once, however many checks ask (the store's id check, the reference's tamper check, the signer named
in the report), and a row changed behind driftcheck's back is still refused."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.api.compare import sides
from driftcheck.api.references import resolve_snapshot
from driftcheck.api.show import show
from driftcheck.errors import TamperedSnapshotError
from driftcheck.snapshot import canonical, signing, trust
from driftcheck.snapshot.canonical import snapshot_id
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.signing import sign_document
from driftcheck.store.delta import pack, unpack
from driftcheck.store.snapshots import Store


def _signed(label: str) -> Snapshot:
    probes = {"env": {"status": "ok", "data": {"vars": {"OMP_NUM_THREADS": label}}, "error": None, "duration_s": 0.0}}
    return Snapshot(sign_document(new_document({"name": "node", "kind": "local"}, probes, label=label),
                                  load_signing_key()))


def _store_of_two(tmp_path: Path) -> Store:
    store = Store(tmp_path / "s.db")
    store.add(_signed("1"))
    store.add(_signed("2"))
    return store


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of canonical serialisations and signature checks, wherever they are asked for."""
    counts = {"canonical": 0, "verify": 0}

    def counted(name: str, function: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            counts[name] += 1
            return function(*args, **kwargs)
        return call

    serialise = counted("canonical", canonical.canonical_bytes)
    for module in (canonical, signing):  # the id's hash reads it from `canonical`, the signature from `signing`
        monkeypatch.setattr(module, "canonical_bytes", serialise)
    verify = counted("verify", signing.verify_document)
    for module in (signing, trust):  # a Snapshot's verdict reads it from `signing`, the trust store imported it
        monkeypatch.setattr(module, "verify_document", verify)
    return counts


def test_two_stored_sides_are_each_serialised_twice_and_verified_once(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store_of_two(tmp_path)
    counts = _counting(monkeypatch)
    first, second, signers = sides("@prev", "@latest", store=store)
    # Per side: the id's hash (the store's check, kept as the snapshot's id) and the signed content (the tamper
    # check, whose verdict names the signer too). Before, 4 serialisations and 2 signature checks per side.
    assert counts == {"canonical": 4, "verify": 2}
    assert [side.signer.state for side in signers.sides.values()] == ["you", "you"]
    assert (first.label, second.label) == ("1", "2")
    assert (first.short_id, second.short_id) == (first.id[:12], second.id[:12]) and counts["canonical"] == 4


def test_show_of_a_stored_snapshot_checks_its_signature_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store_of_two(tmp_path)
    counts = _counting(monkeypatch)
    shown = show("@latest", store=store)
    assert counts == {"canonical": 2, "verify": 1}
    assert shown.signer.state == "you"


def test_a_signed_row_changed_with_its_id_is_still_refused_by_its_signature(tmp_path: Path) -> None:
    # The store's own check is the id (the hash of the content); whoever can write the file can change a row
    # and its id together. The signature is what refuses that, so resolving a reference still checks it.
    store = _store_of_two(tmp_path)
    latest = store.nth_newest(0)
    with sqlite3.connect(tmp_path / "s.db") as db:
        payload, base = db.execute("SELECT payload, base_seq FROM snapshots WHERE id = ?", (latest.id,)).fetchone()
        assert base is None or payload  # a delta or a whole document: rewritten whole below either way
        forged = json.loads(json.dumps(latest.document))
        forged["label"] = "forged"
        db.execute("UPDATE snapshots SET id = ?, payload = ?, base_seq = NULL WHERE id = ?",
                   (snapshot_id(forged), pack(forged), latest.id))
    assert json.loads(unpack(pack(forged)))["label"] == "forged"
    assert store.nth_newest(0).label == "forged"  # the store's id check passes: the id was changed too
    with pytest.raises(TamperedSnapshotError, match="altered"):
        resolve_snapshot("@latest", store)
    with pytest.raises(TamperedSnapshotError, match="altered"):
        sides("@prev", "@latest", store=store)
