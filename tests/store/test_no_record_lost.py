"""No record lost: gc during a running `driftcheck run` leaves the run's snapshots alone (they are pinned from
the moment they are stored), and gc plans and deletes under one write lock."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.hosts.targets import local_host
from driftcheck.probes.prober import Prober
from driftcheck.runs.session import RunPlan, record_run
from driftcheck.runs.store import RunStore
from driftcheck.store.gc import GcResult, collect, plan_gc
from driftcheck.store.pins import Pin
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult

WAIT_FOR_GO = ("import os, sys, time\n"
               "open(sys.argv[1], 'w').close()\n"
               "deadline = time.time() + 30\n"
               "while not os.path.exists(sys.argv[2]) and time.time() < deadline: time.sleep(0.02)\n")


def _wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _snapshot_now() -> str:
    return Prober.for_user(local_host(), store=Store()).snapshot(
        Prober.for_user(local_host()).probes(["system"]), label="meanwhile").id


@pytest.mark.parametrize("keep_last", [0, 1])
def test_gc_while_a_run_runs_keeps_both_its_snapshots(cli: Callable[..., CliResult], tmp_path: Path,
                                                      keep_last: int) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    results: list[GcResult | BaseException] = []

    def meanwhile() -> None:
        try:
            _wait_for(started)
            _snapshot_now()  # newer than the run's "before": that one is no longer its host's newest
            _snapshot_now()
            results.append(collect(Store(), keep_last=keep_last))
        except BaseException as exc:  # handed to the main thread, which fails the test with it
            results.append(exc)
        finally:
            go.touch()

    _snapshot_now()  # the boot's first snapshot (@boot, pinned anyway): the run's are not
    other = threading.Thread(target=meanwhile)
    other.start()
    outcome = record_run(RunPlan(argv=[sys.executable, "-c", WAIT_FOR_GO, str(started), str(go)],
                                 probes=["system"]))
    other.join(30)
    (result,) = results
    assert isinstance(result, GcResult), result
    assert result.removed >= 1  # gc did run and did remove something: the older "meanwhile" snapshot
    assert any("run in progress" in why for _, reasons in result.plan.keep for why in reasons)
    kept = {entry.id for entry in Store().entries()}
    assert outcome.after is not None and {outcome.before.id, outcome.after.id} <= kept  # type: ignore[union-attr]
    explained = cli("explain", "run:@latest", "run:@latest:after")  # both ends of the record resolve
    assert explained.returncode in (0, 1), explained.stderr
    # The record has taken over the pin: nothing of the run is left in the pins table.
    with sqlite3.connect(Store().path) as db:
        assert db.execute("SELECT COUNT(*) FROM pins").fetchone()[0] == 0
    assert RunStore().pinned_snapshot_ids() == {outcome.before.id, outcome.after.id}  # type: ignore[union-attr]


def test_a_pin_of_a_process_that_ended_pins_nothing() -> None:
    store = Store()
    _snapshot_now()  # @boot
    first = _snapshot_now()
    second = _snapshot_now()
    store.add(store.load(first), pin=Pin("no-such-host-here", 1))  # another host's pin: kept, unverifiable
    plan = plan_gc(store, keep_last=0)
    assert [e.id for e in plan.remove] == []
    with store.database() as db:
        db.execute("UPDATE pins SET host = ?, pid = ?", (Pin.this_process().host, 2**22 + 12345))
    result = collect(store, keep_last=0)  # a pid that is not running: the pin is stale, dropped by gc
    assert [e.id for e in result.plan.remove] == [first]
    assert first not in {e.id for e in store.entries()} and second in {e.id for e in store.entries()}
    with store.database() as db:
        assert db.execute("SELECT COUNT(*) FROM pins").fetchone()[0] == 0


def test_a_run_that_fails_before_its_record_lets_go_of_its_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(RunStore, "add", broken)
    with pytest.raises(RuntimeError):
        record_run(RunPlan(argv=[sys.executable, "-c", "pass"], probes=["system"]))
    with Store().database() as db:
        assert db.execute("SELECT COUNT(*) FROM pins").fetchone()[0] == 0


def test_gc_plans_under_the_write_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """While gc plans, no other writer can commit: what it decided is what it deletes."""
    for _ in range(3):
        _snapshot_now()
    store = Store()
    blocked: list[bool] = []
    entries = Store.entries

    def entries_while_probing_the_lock(self: Store, limit: int | None = None) -> list:  # type: ignore[type-arg]
        writer = sqlite3.connect(self.path, timeout=0, isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")
            writer.execute("ROLLBACK")
            blocked.append(False)
        except sqlite3.OperationalError as exc:
            blocked.append("locked" in str(exc))
        finally:
            writer.close()
        return entries(self, limit)

    monkeypatch.setattr(Store, "entries", entries_while_probing_the_lock)
    result = collect(store, keep_last=0)
    assert blocked and all(blocked)
    assert result.removed == 1
