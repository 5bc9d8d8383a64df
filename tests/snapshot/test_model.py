"""Reading snapshots back: truncated, foreign, newer-schema input is a SnapshotError, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftcheck.errors import SnapshotError
from driftcheck.snapshot.canonical import canonical_bytes, pretty_json, snapshot_id
from driftcheck.snapshot.model import SCHEMA_VERSION, new_document, parse_snapshot, read_snapshot_file


def _doc() -> dict:
    return new_document({"name": "h", "kind": "local"},
                        {"python": {"status": "ok", "data": {"version": "3.11.7"}, "error": None, "duration_s": 0.1}})


def test_round_trip_keeps_id() -> None:
    doc = _doc()
    again = parse_snapshot(pretty_json(doc), "x")
    assert again.id == snapshot_id(doc)
    assert canonical_bytes(again.document) == canonical_bytes(doc)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"schema": 1, "created_at": "x", "host": {}, "pro', "truncated"),
    ("[1, 2, 3]", "not a driftcheck snapshot"),
    ('{"hello": "world"}', "missing"),
    ('{"schema": "1", "created_at": "x", "host": {}, "probes": {}}', "schema"),
    ('{"schema": 1, "created_at": "x", "host": {}, "probes": {"a": {"status": "weird"}}}', "no valid status"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
])
def test_bad_input_is_a_snapshot_error(text: str | bytes, reason: str) -> None:
    with pytest.raises(SnapshotError, match=reason):
        parse_snapshot(text, "input")


def test_newer_schema_asks_for_an_upgrade() -> None:
    doc = _doc()
    doc["schema"] = SCHEMA_VERSION + 1
    with pytest.raises(SnapshotError, match="newer driftcheck"):
        parse_snapshot(json.dumps(doc), "input")


def test_files_that_are_not_snapshots(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(SnapshotError, match="empty"):
        read_snapshot_file(empty)
    with pytest.raises(SnapshotError, match="directory"):
        read_snapshot_file(tmp_path)
    with pytest.raises(SnapshotError, match="cannot read"):
        read_snapshot_file(tmp_path / "absent.json")


@pytest.mark.parametrize(("text", "reason"), [
    ('{"schema": 1, "created_at": "x", "host": {}, "probes": {}, "label": NaN}', "NaN is not a JSON value"),
    ('{"schema": 1, "created_at": "x", "host": {}, "probes": {}, "label": -Infinity}', "Infinity"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"schema": ' + "9" * 5000 + "}", "not a driftcheck snapshot"),
])
def test_json_that_python_reads_but_a_snapshot_cannot_hold(text: str, reason: str) -> None:
    with pytest.raises(SnapshotError, match=reason):
        parse_snapshot(text, "input")
