"""A whole recorded run with GPU telemetry (NVML through the fake), and `explain` ranking what it saw."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.runs import execute
from driftcheck.runs.session import RunPlan, command_python, record_run
from driftcheck.runs.store import RunStore
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult
from tests.nvidia.fake_pynvml import FakeNvml, dual_rtx_2070

SLEEP_AND_PRINT = "import time; time.sleep(1.2); print('Output token throughput (tok/s): {}')"


def _record(value: float, reasons: int, clock_mhz: int) -> None:
    gpus = dual_rtx_2070()
    for gpu in gpus:
        gpu.update({"reasons": reasons, "clocks": {1: clock_mhz, 2: 7001, 0: clock_mhz, 3: 1500}})
    plan = RunPlan(argv=[sys.executable, "-c", SLEEP_AND_PRINT.format(value)], probes=["env"], interval_s=0.2,
                   nvml=FakeNvml(gpus))
    outcome = record_run(plan)
    assert outcome.record.exit_code == 0 and outcome.after is not None


def test_telemetry_lands_in_the_record_and_explain_ranks_it(cli: Callable[..., CliResult]) -> None:
    _record(94.1, reasons=0x0, clock_mhz=1980)
    _record(60.3, reasons=0x8, clock_mhz=1200)  # HW slowdown the whole run on both GPUs
    first, second = RunStore().entries()
    assert first.telemetry["gpu_source"] == "nvml" and len(first.telemetry["gpus"]) == 2
    assert first.conditions == []
    assert {(c["label"], c["kind"], c["fraction"]) for c in second.conditions} == \
        {("GPU 0", "hw_slowdown", 1.0), ("GPU 1", "hw_slowdown", 1.0)}
    series = RunStore().series(second.id or 0)
    assert series is not None and len(series["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]["t"]) >= 4

    listed = cli("runs")
    assert "! GPU 0 spent 100% of the run in HW slowdown" in listed.stdout

    explained = cli("explain", "run:1", "run:2")
    lines = explained.stdout.splitlines()
    assert lines[1] == "  Output token throughput: 94.1 \u2192 60.3 tok/s (\u221236%) worse"
    causes = [line for line in lines if line.lstrip().startswith(("1. [", "2. [", "3. [", "4. ["))]
    assert "GPU 0 spent 100% of run 2 in HW slowdown; 0% in run 1" in causes[0] or \
        "GPU 1 spent 100% of run 2 in HW slowdown; 0% in run 1" in causes[0], explained.stdout
    assert any("median SM clock of 1200 MHz in run 2, 1980 MHz in run 1" in line for line in causes)

    report = json.loads(cli("explain", "run:1", "run:2", "--format", "json").stdout)
    assert report["runs"]["metrics"][0]["worse"] is True
    changes = {row["path"]: row for row in report["changes"]}
    for explanation in report["explanations"]:  # the contract: every evidence path is a row of `changes`
        assert all(path in changes for path in explanation["evidence"])
    slowdown = changes["runs.telemetry.gpus.GPU-12345678-aaaa-bbbb-cccc-0123456789ab.hw_slowdown.fraction"]
    assert (slowdown["before"], slowdown["after"], slowdown["category"]) == (0.0, 1.0, "thermal")


def test_the_command_interpreter_is_the_target_python() -> None:
    assert command_python([sys.executable, "-c", "pass"]) == sys.executable
    assert command_python(["true"]) is None


def test_snapshots_a_run_points_at_are_pinned_and_resolvable(cli: Callable[..., CliResult]) -> None:
    _record(94.1, reasons=0x0, clock_mhz=1980)
    (run,) = RunStore().entries()
    assert RunStore().pinned_snapshot_ids() == {run.snapshot_id, run.after_snapshot_id}
    before = cli("show", "run:1", "--format", "json")
    after = cli("show", "run:@latest:after", "--format", "json")
    assert before.returncode == after.returncode == 0
    assert before.stdout != after.stdout


def test_the_note_of_the_reading_after_comes_after_the_commands_last_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pump pauses after a short read (here long enough to be sure the command writes its last line and
    # ends meanwhile): the note must still wait for that line, as a user reads them on one terminal.
    monkeypatch.setattr(execute, "_COALESCE_S", 0.5)
    log = tmp_path / "out.log"
    seen: list[tuple[str, bytes]] = []
    with log.open("w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        plan = RunPlan(argv=["sh", "-c", "echo first; sleep 0.05; echo LAST"], probes=["env"], sign=False)
        record_run(plan, note=lambda text: seen.append((text, log.read_bytes())))
    (printed,) = [printed for text, printed in seen if text == "taking the reading after the run"]
    assert printed == b"first\nLAST\n"


def _pins() -> list[str]:
    """The snapshots some process still holds (store/pins.py): none once a run has ended."""
    with Store().database() as db:
        return [row[0] for row in db.execute("SELECT snapshot_id FROM pins")]


def _interrupted_once(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> list[int]:
    """The first write of a run record raises `error`, as a Ctrl-C landing in it would; the calls, counted."""
    calls: list[int] = []
    insert = RunStore._insert

    def interrupted(self: RunStore, *args: object) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return insert(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "_insert", interrupted)
    return calls


def test_the_reading_after_and_the_record_are_kept_together_or_not_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupted_once(monkeypatch, OSError("disk gone"))
    plan = RunPlan(argv=["true"], probes=["env"], sign=False)
    with pytest.raises(OSError, match="disk gone"):
        record_run(plan)
    # The reading before was stored (before the command ran), and let go; the reading after never was.
    assert RunStore().entries() == []
    assert [entry.label for entry in Store().entries()] == ["run: true"]
    assert _pins() == []


def test_a_ctrl_c_while_the_record_is_written_keeps_it_without_the_reading_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _interrupted_once(monkeypatch, KeyboardInterrupt())
    outcome = record_run(RunPlan(argv=["true"], probes=["env"], sign=False))
    (run,) = RunStore().entries()
    assert len(calls) == 2 and outcome.after is None and run.after_snapshot_id is None
    assert [entry.label for entry in Store().entries()] == ["run: true"]
    assert _pins() == []


def test_the_reading_after_a_run_is_answered_by_the_interpreter_held_since_the_command_started(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from driftcheck.hosts import warm

    held: list[Any] = []
    taken: list[Any] = []
    hold, take = warm.hold, warm.take
    ended = tmp_path / "ended"

    def watched_hold(*args: Any) -> None:
        hold(*args)
        held.append((warm._held[args[0]].process, ended.exists()))

    def watched_take(*args: Any) -> Any:
        taken.append(take(*args))
        return taken[-1]

    monkeypatch.setattr(warm, "hold", watched_hold)
    monkeypatch.setattr(warm, "take", watched_take)
    # The command ends only once its interpreter for the reading after is held: it is held while the command runs.
    code = ("import os, sys, time\n"
            "def held():\n"
            "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
            "        try:\n"
            "            stat = open(f'/proc/{pid}/stat').read()\n"
            "            args = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')\n"
            "        except OSError:\n"
            "            continue\n"
            "        if stat.rsplit(')', 1)[1].split()[1] == str(os.getppid()) and b'-S' in args:\n"
            "            return True\n"
            "deadline = time.monotonic() + 20\n"
            "while not held() and time.monotonic() < deadline:\n"
            "    time.sleep(0.01)\n"
            "open(sys.argv[1], 'w').close()\n"
            "print('Output token throughput (tok/s): 94.1')")
    outcome = record_run(RunPlan(argv=[sys.executable, "-c", code, str(ended)], sign=False))
    assert outcome.after is not None and outcome.record.exit_code == 0
    assert [m.value for m in outcome.record.metrics] == [94.1]
    (process, command_had_ended), = held
    assert not command_had_ended and "-S" in process.args
    assert taken[-1] is process  # the reading after took it, released
    assert outcome.after.probes["python"]["status"] == "ok"
    assert outcome.after.probe_data("python") == outcome.before.probe_data("python")  # type: ignore[union-attr]


def test_the_calls_a_run_asks_ahead_are_among_those_its_cheap_probes_make() -> None:
    # Asked ahead, a call nobody makes costs its work for nothing: the list must follow the probes.
    from driftcheck.api.run import AHEAD_CALLS
    from driftcheck.hosts import LocalHost
    from driftcheck.probes.base import ProbeOptions
    from driftcheck.probes.prober import Prober

    host = LocalHost()
    options = ProbeOptions()
    made = {call.key for probe in Prober.for_user(host, sign=False).probes(cheap_only=True)
            for call in probe.interpreter_calls(host, options)}
    assert {call.key for call in AHEAD_CALLS} <= made


def test_both_snapshots_of_a_run_read_a_target_interpreter_started_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    from driftcheck.api.run import run
    from driftcheck.hosts import warm

    taken: list[bool] = []
    take = warm.take

    def watched(*args: Any) -> Any:
        process = take(*args)
        taken.append(process is not None)
        return process

    monkeypatch.setattr(warm, "take", watched)
    outcome = run([sys.executable, "-c", "print('Output token throughput (tok/s): 94.1')"], interval_s=0.2)
    assert taken == [True, True]
    assert outcome.before is not None and outcome.after is not None
    for snapshot in (outcome.before, outcome.after):
        probes = snapshot.document["probes"]
        assert {name: probes[name]["status"] for name in ("python", "packages", "torch", "kernels")} == \
            dict.fromkeys(("python", "packages", "torch", "kernels"), "ok")


def test_the_snapshot_before_is_stored_once_the_command_runs_not_before(monkeypatch: pytest.MonkeyPatch) -> None:
    happened: list[str] = []
    start, add = execute._start, Store.add

    def watched_start(*args: Any, **kwargs: Any) -> Any:
        process = start(*args, **kwargs)
        happened.append("command started")
        return process

    def watched_add(self: Store, snapshot: Any, pin: Any = None) -> str:
        happened.append(f"stored {snapshot.label}")
        return add(self, snapshot, pin=pin)

    monkeypatch.setattr(execute, "_start", watched_start)
    monkeypatch.setattr(Store, "add", watched_add)
    outcome = record_run(RunPlan(argv=[sys.executable, "-c", "print('Output token throughput (tok/s): 94.1')"],
                                 probes=["env"], sign=False))
    assert happened == ["command started", f"stored {outcome.before.label}", f"stored {outcome.after.label}"]  # type: ignore[union-attr]
    assert [m.to_json()["value"] for m in outcome.record.metrics] == [94.1]
    assert Store().load(outcome.record.snapshot_id).id == outcome.before.id  # type: ignore[union-attr]


def test_a_store_that_cannot_keep_the_snapshot_before_fails_the_run_once_its_command_has_ended(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from driftcheck.errors import DriftcheckError

    def refused(self: Store, snapshot: Any, pin: Any = None) -> str:
        raise DriftcheckError("store full")

    monkeypatch.setattr(Store, "add", refused)
    ran = tmp_path / "ran"
    with pytest.raises(DriftcheckError, match="store full"):
        record_run(RunPlan(argv=["touch", str(ran)], probes=["env"], sign=False))
    assert ran.exists()  # the command ran: its store failure is told at the end, as the record's would be
    assert RunStore().entries() == []


def test_a_command_that_cannot_start_leaves_no_snapshot_and_no_pin() -> None:
    from driftcheck.errors import CommandNotRunnable

    with pytest.raises(CommandNotRunnable):
        record_run(RunPlan(argv=["/nonexistent/driftcheck-test-command"], probes=["env"], sign=False))
    assert Store().entries() == [] and _pins() == []
