"""The runner: concurrency, per-probe time limits, isolation in a real child process, outcomes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost
from driftcheck.probes.runner import run_probes
from tests.probes import sample_probes as sp

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def importable_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    # The isolated child imports the sample probes by module name.
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))


def test_every_failure_becomes_an_outcome_and_the_rest_goes_on() -> None:
    started = time.monotonic()
    outcomes = run_probes(LocalHost(), [sp.FastProbe(), sp.HangingProbe(), sp.BrokenProbe(),
                                        sp.MissingFileProbe(), sp.DeniedProbe()])
    elapsed = time.monotonic() - started
    assert outcomes["fast"].status == "ok"
    assert outcomes["hangs"].status == "timeout"
    assert "abandoned" in outcomes["hangs"].error["message"]
    assert outcomes["broken"].status == "error"
    assert outcomes["broken"].error["type"] == "ValueError"
    assert "int(raw" in outcomes["broken"].error["traceback"]
    assert outcomes["missing"].status == "unavailable"
    assert outcomes["denied"].status == "denied"
    # The hung probe was abandoned at its 0.5 s limit, not waited for.
    assert elapsed < 5


def test_isolated_probe_runs_in_another_process() -> None:
    outcomes = run_probes(LocalHost(), [sp.FastProbe(), sp.IsolatedFastProbe()])
    assert outcomes["fast"].data == {"gathered_in_pid": os.getpid()}
    assert outcomes["isolated_fast"].status == "ok"
    assert outcomes["isolated_fast"].data["gathered_in_pid"] != os.getpid()


def test_an_isolated_probes_steps_come_back_to_its_reporter() -> None:
    probe, steps = sp.SteppingProbe(), []
    probe.steps = steps.append
    outcomes = run_probes(LocalHost(), [probe])
    assert outcomes["isolated_steps"].status == "ok"
    assert outcomes["isolated_steps"].data["gathered_in_pid"] != os.getpid()  # type: ignore[index]
    assert steps == ["run 1/2: done", "run 2/2: done"]


def test_isolated_hang_is_killed_and_a_crash_is_contained() -> None:
    outcomes = run_probes(LocalHost(), [sp.IsolatedHangingProbe(), sp.CrashingProbe(), sp.FastProbe()])
    assert outcomes["isolated_hangs"].status == "timeout"
    assert "killed" in outcomes["isolated_hangs"].error["message"]
    assert outcomes["crashes"].status == "error"
    assert "signal" in outcomes["crashes"].error["message"]
    assert outcomes["fast"].status == "ok"


def test_a_probe_whose_requirement_failed_is_skipped() -> None:
    outcomes = run_probes(LocalHost(), [sp.NeedsBrokenProbe(), sp.BrokenProbe(), sp.NeedsFastProbe(),
                                        sp.FastProbe()])
    assert outcomes["needs_broken"].status == "skipped"
    assert "broken" in outcomes["needs_broken"].error["message"]
    assert outcomes["needs_fast"].status == "ok"


def test_progress_reports_each_probe_once() -> None:
    seen: list[tuple[str, str, int, int]] = []
    run_probes(LocalHost(), [sp.FastProbe(), sp.HangingProbe()],
               progress=lambda name, outcome, done, total: seen.append((name, outcome.status, done, total)))
    assert sorted(seen) == [("fast", "ok", 1, 2), ("hangs", "timeout", 2, 2)]


def test_a_facts_script_that_raises_is_an_error_not_an_absence(tmp_path) -> None:
    from driftcheck.probes.python import PythonProbe

    # A real interpreter whose startup makes every script raise: a broken install, not a missing one.
    broken = tmp_path / "site"
    broken.mkdir()
    (broken / "platform.py").write_text("raise RuntimeError('broken platform module')\n")
    import os
    import sys as _sys

    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={broken} exec {_sys.executable} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    outcome = run_probes(LocalHost(str(wrapper)), [PythonProbe()])["python"]
    assert outcome.status == "error", outcome
    assert "raised" in outcome.error["message"] and "broken platform module" in outcome.error["message"]
    missing = run_probes(LocalHost(str(tmp_path / "nope")), [PythonProbe()])["python"]
    assert missing.status == "unavailable"
