"""A snapshot's id is the hash of its canonical content, worked out once however often it is asked for."""

from __future__ import annotations

import pytest

from driftcheck.snapshot import model
from driftcheck.snapshot.canonical import snapshot_id
from driftcheck.snapshot.model import Snapshot, new_document


def test_the_id_is_the_content_hash_and_is_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    document = new_document({"name": "node-a", "kind": "local"},
                             {"env": {"status": "ok", "data": {"vars": {"A": "1"}}, "error": None,
                                      "duration_s": 0.01}}, label="x")
    calls: list[int] = []
    monkeypatch.setattr(model, "snapshot_id", lambda doc: calls.append(1) or snapshot_id(doc))
    snapshot = Snapshot(document)
    ids = {snapshot.id, snapshot.short_id, snapshot.summary()["id"], snapshot.id}
    assert snapshot.id == snapshot_id(document) and len(calls) == 1
    assert ids == {snapshot.id, snapshot.id[:12]}
    assert Snapshot(document) == snapshot  # still a plain value: the cached id is no part of equality
