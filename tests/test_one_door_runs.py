"""One door for runs, trials and fleets: what `--format json` prints is the face's result, `.to_json()`.

Each verb is called twice: by the command line in-process, its face function watched so the very result it
rendered is at hand (the JSON printed must be that result's `.to_json()`, to the byte after a JSON round
trip), and by a harness in the keyword form with the same inputs (the same JSON, but for what a clock decides).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import driftcheck
from driftcheck.commands import bisect as bisect_command
from driftcheck.commands import fleet as fleet_command
from driftcheck.commands import try_ as try_command
from driftcheck.runs.metrics import Metric
from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
HOSTS = Path(__file__).resolve().parent / "data" / "hosts"
PLAIN = f"replay:{HOSTS / 'debian12-vm-docker'}"
P2P_OFF = f"replay:{HOSTS / 'debian12-vm-docker-nccl-p2p-disable'}"
# A command whose figure never moves: a trial of it decides nothing, in the fewest rounds a trial takes.
STEADY = ("sh", "-c", "echo 5 ms")


def _printed(result: CliResult) -> Any:
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return json.loads(result.stdout)


def _as_printed(document: Any) -> Any:
    """`document` as JSON gives it back (tuples become lists, keys strings)."""
    return json.loads(json.dumps(document))


def _watched(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """The results the command module's face function `name` returns, as it returns them."""
    returned: list[Any] = []
    face = getattr(module, name)

    def watching(*args: Any, **kwargs: Any) -> Any:
        returned.append(face(*args, **kwargs))
        return returned[-1]

    monkeypatch.setattr(module, name, watching)
    return returned


def _untimed(document: dict[str, Any]) -> dict[str, Any]:
    """A trial's JSON without what the clock decides (the seconds each run and the trial took)."""
    runs = [{k: v for k, v in run.items() if k != "duration_s"} for run in document["runs"]]
    return {**{k: v for k, v in document.items() if k != "elapsed_s"}, "runs": runs}


def _record(label: str, value: float) -> RunRecord:
    return RunRecord(command=["python", "bench.py"], cwd="/work", host="gpu01", started_at="2026-01-02T03:04:05Z",
                     duration_s=12.5, exit_code=0, snapshot_id=None, label=label,
                     metrics=[Metric("output_token_throughput", value, "tok/s", "Output token throughput", "table")])


def test_runs_json_is_the_run_history(cli: Cli) -> None:
    store = RunStore()
    for label, value in (("nightly", 94.1), ("adhoc", 60.2), ("nightly", 89.0)):
        store.add(_record(label, value))
    printed = _printed(cli("runs", "--format", "json", "--label", "nightly", "-n", "5"))
    assert printed == _as_printed(driftcheck.run_history(limit=5, label="nightly").to_json())
    assert [run["metrics"][0]["value"] for run in printed] == [94.1, 89.0]


def test_one_run_json_is_the_run_record(cli: Cli) -> None:
    RunStore().add(_record("nightly", 94.1))
    for reference in ("1", "run:@latest"):
        printed = _printed(cli("runs", reference, "--format", "json"))
        assert printed == _as_printed(driftcheck.run_record(reference).to_json())
        assert printed == _as_printed(driftcheck.run_record(1).to_json())


def test_gc_json_is_the_gc_result(cli: Cli) -> None:
    for label in ("first", "second", "third"):
        driftcheck.take_snapshot(driftcheck.SnapshotRequest(target=PLAIN, label=label, probes=["nccl"]))
    printed = _printed(cli("gc", "--keep-last", "1", "--dry-run", "--format", "json"))
    assert printed == _as_printed(driftcheck.gc(keep_last=1, dry_run=True).to_json())
    assert len(printed["remove"]) == 2 and len(Store().entries()) == 3


def test_schedule_status_json_is_the_schedule_status(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "image"
    root.mkdir()
    assert cli("schedule", "install", "--root", str(root), "--every", "6h", "--at-boot").returncode == 0
    driftcheck.take_snapshot(driftcheck.SnapshotRequest(target=PLAIN, label="scheduled", probes=["nccl"]))
    printed = _printed(cli("schedule", "status", "--root", str(root), "--format", "json"))
    assert printed == _as_printed(driftcheck.schedule_status(root=root).to_json())
    assert printed["installed"] and printed["settings"]["every"] == "6h" and printed["last"]["scheduled"]


def test_fleet_json_is_the_fleet_result(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    returned = _watched(monkeypatch, fleet_command, "fleet")
    hosts = (PLAIN, P2P_OFF, PLAIN.replace("docker", "docker-omp-threads"))
    printed = _printed(cli("fleet", *hosts, "--probe", "nccl", "--format", "json"))
    assert printed == _as_printed(returned[0].to_json())
    harness = _as_printed(driftcheck.fleet(hosts, probes=["nccl"]).to_json())
    # The same report of the same machines; only the new snapshots' ids differ.
    assert {k: v for k, v in harness.items() if k != "snapshots"} == {k: v for k, v in printed.items()
                                                                      if k != "snapshots"}
    assert list(harness["snapshots"]) == list(printed["snapshots"]) == sorted(hosts)


@pytest.mark.slow
def test_try_json_is_the_trial_result(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    returned = _watched(monkeypatch, try_command, "trial")
    printed = _printed(cli("try", "--seed", "7", "--max-pairs", "2", "--b", "X=1", "--no-record", "--format",
                           "json", "--", *STEADY))
    assert printed == _as_printed(returned[0].to_json())
    harness = driftcheck.trial(STEADY, variants=[driftcheck.variant("A"), driftcheck.variant("B", ["X=1"])],
                               seed=7, max_pairs=2, record=False)
    assert _untimed(printed) == _untimed(_as_printed(harness.to_json()))
    assert printed["comparisons"]["B"]["verdict"] == "no difference resolved"


@pytest.mark.slow
def test_bisect_json_is_the_bisection(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    returned = _watched(monkeypatch, bisect_command, "bisect")
    printed = _printed(cli("bisect", "--seed", "7", "--max-pairs", "2", "--b", "X=1 Y=2", "--no-record", "--format",
                           "json", "--", *STEADY))
    assert printed == _as_printed(returned[0].to_json())
    harness = driftcheck.bisect(STEADY, variants=[driftcheck.variant("A"), driftcheck.variant("B", ["X=1 Y=2"])],
                                seed=7, max_pairs=2, record=False)
    assert printed == _as_printed(harness.to_json())  # a bisection's JSON holds no timing
    assert printed["changes"] == ["X=1", "Y=2"] and printed["culprits"] == []


def test_the_face_refuses_what_the_command_line_refuses_before_anything_runs() -> None:
    from driftcheck.errors import OptionError

    with pytest.raises(OptionError, match="give the command to run"):
        driftcheck.run([])
    with pytest.raises(OptionError, match="interval_s=0.01: give between 0.1 and 60 seconds"):
        driftcheck.run(["true"], interval_s=0.01)
    variants = [driftcheck.variant("A"), driftcheck.variant("B", ["X=1"])]
    with pytest.raises(OptionError, match="alpha=0.7"):
        driftcheck.trial(STEADY, variants=variants, alpha=0.7)
    with pytest.raises(OptionError, match="max_pairs=1: a trial needs at least 2 rounds"):
        driftcheck.bisect(STEADY, variants=variants, max_pairs=1)
    with pytest.raises(OptionError, match="wall"):
        driftcheck.trial(STEADY, variants=variants, wall=True, figure="milliseconds")
    with pytest.raises(OptionError, match="b=X: give NAME=VALUE"):
        driftcheck.variant("B", ["X"])
    assert Store().entries() == [] and RunStore().entries() == []  # nothing was taken, nothing ran


def test_the_face_is_keyword_arguments_with_defaults() -> None:
    import inspect

    for verb in (driftcheck.run, driftcheck.trial, driftcheck.bisect, driftcheck.fleet, driftcheck.gc,
                 driftcheck.run_history, driftcheck.schedule_install, driftcheck.schedule_status,
                 driftcheck.schedule_remove):
        parameters = list(inspect.signature(verb).parameters.values())
        keywords = [p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
        assert len(parameters) - len(keywords) <= 1, verb  # at most the one thing it acts on, positionally
        assert all(p.default is not inspect.Parameter.empty for p in keywords if p.name != "variants"), verb
