"""Where runs meet explain, as functions of records and snapshots already read: no store is opened here."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftcheck.analysis.run_causes import change_points_of, given_throughput, plain_by_server, plain_named_run
from driftcheck.errors import UsageError
from driftcheck.runs.metrics import ACCEPT_LENGTH, Metric
from driftcheck.runs.store import RunRecord
from driftcheck.snapshot.model import read_snapshot_file

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"


def _run(run_id: int, snapshot_id: str | None, accept: float | None = None) -> RunRecord:
    metrics = [Metric(ACCEPT_LENGTH, accept, None, "Accept length", "output")] if accept is not None else []
    return RunRecord(command=["python", "bench.py"], cwd="/", host="h", started_at="2026-01-01T00:00:00Z",
                     duration_s=1.0, exit_code=0, snapshot_id=snapshot_id, metrics=metrics, id=run_id)


def test_a_change_point_marks_the_run_whose_snapshot_moved_with_its_top_cause() -> None:
    a, b = (read_snapshot_file(PAIRS / "env-thread-count" / f"{side}.json") for side in ("a", "b"))
    runs = [_run(1, "sa"), _run(2, "sa"), _run(3, "sb"), _run(4, "gone")]
    points = change_points_of(runs, {"sa": a, "sb": b})
    assert [(p.run_id, p.previous_id) for p in points] == [(3, 2)]  # same snapshot: none; one not stored: none
    assert points[0].cause.startswith("OMP_NUM_THREADS") and points[0].causes >= 1


def test_a_given_throughput_is_a_positive_number() -> None:
    assert given_throughput("73.8").throughput == 73.8
    for bad in ("fast", "0", "-3", "inf", "nan"):
        with pytest.raises(UsageError):
            given_throughput(bad)


def test_a_named_run_with_an_accept_length_ran_with_speculation() -> None:
    assert plain_named_run("run:2", _run(2, "s")).run is not None
    with pytest.raises(UsageError, match="printed an accept length"):
        plain_named_run("run:2", _run(2, "s", accept=2.4))


def test_the_run_whose_server_had_no_speculation_is_the_plain_one() -> None:
    spec, plain = _run(1, "s1", accept=2.4), _run(2, "s2")
    sglang = {"engine": "sglang", "server_args": {"speculative_algorithm": None}}
    found = plain_by_server(spec, plain, {"s2": sglang})
    assert found is not None and found.run is plain
    assert plain_by_server(spec, plain, {}) is None  # its snapshot collected: nothing to go by
    assert plain_by_server(spec, plain, {"s2": {**sglang, "server_args": {"speculative_algorithm": "EAGLE"}}}) is None
