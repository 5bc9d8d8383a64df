"""Benchmark sessions kept per host, suite and device (driftcheck.store.sessions), and the check's side of it
(driftcheck.api.sessions): a passing check keeps its record and its reference's as two sessions of one state,
and the next check carries the spreads they measure."""

from __future__ import annotations

import copy
from pathlib import Path

from driftcheck.analysis.sessions import between_of
from driftcheck.api.sessions import keep_passed_check, session_key, with_between
from driftcheck.snapshot.model import Snapshot, read_snapshot_file
from driftcheck.store.sessions import SessionKey, add_session, sessions_of
from driftcheck.store.snapshots import Store

BASE = Path(__file__).resolve().parent.parent / "data" / "pairs" / "base.json"
KEY = SessionKey("node-1", "quick", "cpu")


def _results(*medians: float) -> dict:
    return {"gemm": {"unit": "GFLOP/s", "higher_is_better": True, "median": medians[len(medians) // 2],
                     "runs": [{"median": m, "ci_rel": 0.01} for m in medians]}}


def test_sessions_are_kept_once_and_read_by_host_suite_and_device(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    assert add_session(store, KEY, "state-a", "rec-1", _results(10.0, 10.1, 9.9)) == 1
    assert add_session(store, KEY, "state-a", "rec-1", _results(50.0, 50.0, 50.0)) == 0  # kept as it was
    add_session(store, KEY, "state-a", "rec-2", _results(11.0, 11.1, 10.9))
    add_session(store, SessionKey("node-1", "quick", "cuda"), "state-b", "rec-3", _results(1.0))
    add_session(store, KEY, "state-c", "rec-4", {"gemm": {"unit": "GFLOP/s", "median": 3.0}})  # no runs: nothing
    kept = sessions_of(store, KEY)
    assert [(s.state, s.session, s.name) for s in kept] == [("state-a", "rec-1", "gemm"), ("state-a", "rec-2", "gemm")]
    assert [run["median"] for run in kept[0].entry["runs"]] == [10.0, 10.1, 9.9]
    assert kept[0].entry["higher_is_better"] is True
    assert sessions_of(Store(tmp_path / "other.db"), KEY) == []


def _with_bench(document: dict, host: str, *medians: float) -> Snapshot:
    doc = copy.deepcopy(document)
    doc["host"] = {**doc["host"], "name": host}
    doc["probes"]["bench"] = {"status": "ok", "error": None, "duration_s": 1.0,
                              "data": {"suite": "quick", "device": "cpu", "results": _results(*medians)}}
    doc.pop("signature", None)
    return Snapshot(doc)


def test_a_passing_check_keeps_two_sessions_and_the_next_check_carries_their_spread(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    base = read_snapshot_file(BASE).document
    reference = _with_bench(base, "node-1", 10.0, 10.1, 9.9)
    host = reference.host_name
    assert host == "node-1"
    checks = [_with_bench({**base, "label": f"check {i}"}, "node-1", 10.0 + i, 10.1 + i, 9.9 + i) for i in (1, 2)]
    assert keep_passed_check(store, reference, checks[0]) == 2
    assert keep_passed_check(store, reference, checks[1]) == 1  # the reference is kept once
    key = session_key(reference.probe_data("bench"), host)
    assert key == SessionKey(host, "quick", "cpu") and len(sessions_of(store, key)) == 3
    fresh = with_between(_with_bench(base, "node-1", 12.0, 12.1, 11.9), store, key, None)
    carried = between_of(fresh.probe_data("bench") or {}, "cpu")["gemm"]
    assert carried.of("raw").measured and carried.of("raw").sessions == 3
    # A snapshot without benchmark results is left as it is.
    assert with_between(Snapshot(copy.deepcopy(base)), store, key, None).document == base


def test_a_check_against_another_hosts_reference_keeps_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    base = read_snapshot_file(BASE).document
    reference = _with_bench(base, "node-1", 10.0, 10.1, 9.9)
    fresh = _with_bench(base, "node-2", 10.0, 10.1, 9.9)
    assert keep_passed_check(store, reference, fresh) == 0
    assert sessions_of(store, SessionKey("node-2", "quick", "cpu")) == []
    assert sessions_of(store, KEY) == []
