"""The one child-process protocol of isolated probes and benchmark runs (driftcheck.hosts.child)."""

from __future__ import annotations

import pytest

from driftcheck.baselines.deps import BenchDependencyError
from driftcheck.baselines.repeated import _raised_in_child
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.hosts.child import ChildDied, ChildFailed, ChildTimeout, call

CHILD = "tests.hosts.child_work"


def test_a_result_comes_back_as_it_was() -> None:
    assert call(CHILD, {"do": "echo", "value": [1, "x", None]}, 30) == {"echo": [1, "x", None]}


def test_a_failure_comes_back_by_name_with_its_exit_code() -> None:
    with pytest.raises(ChildFailed) as usage:
        call(CHILD, {"do": "usage"}, 30)
    assert (usage.value.type_name, str(usage.value), usage.value.exit_code) == ("UsageError", "no such suite", 2)
    with pytest.raises(ChildFailed) as crash:
        call(CHILD, {"do": "crash"}, 30)
    assert crash.value.type_name == "ValueError" and crash.value.exit_code is None
    assert "bad value" in crash.value.child_traceback


def test_a_child_that_dies_or_hangs_is_told_apart() -> None:
    with pytest.raises(ChildDied, match="exit code 3"):
        call(CHILD, {"do": "exit"}, 30)
    with pytest.raises(ChildTimeout, match="killed"):
        call(CHILD, {"do": "hang"}, 2)


def test_steps_the_child_reports_reach_the_parent_as_they_come() -> None:
    steps: list[str] = []
    assert call(CHILD, {"do": "echo", "value": 1, "steps": ["run 1/2", "run 2/2"]}, 30, steps.append) == {"echo": 1}
    assert steps == ["run 1/2", "run 2/2"]
    # Without a reporter the steps are dropped with the rest of stderr; the reply is the same.
    assert call(CHILD, {"do": "echo", "value": 1, "steps": ["run 1/2"]}, 30) == {"echo": 1}


def test_a_child_that_dies_after_its_steps_is_named_by_its_complaint_not_a_step() -> None:
    steps: list[str] = []
    with pytest.raises(ChildDied, match="exit code 3: out of memory$"):
        call(CHILD, {"do": "exit", "steps": ["run 1/3"], "complain": "out of memory"}, 30, steps.append)
    assert steps == ["run 1/3"]
    with pytest.raises(ChildTimeout, match="killed"):
        call(CHILD, {"do": "hang", "steps": ["run 1/3"]}, 2, steps.append)


def test_a_reporter_that_fails_does_not_lose_the_reply() -> None:
    def broken(line: str) -> None:
        raise OSError("terminal closed")

    assert call(CHILD, {"do": "echo", "value": 2, "steps": ["a", "b"]}, 30, broken) == {"echo": 2}


def test_a_benchmark_run_raises_here_what_it_raised_there() -> None:
    assert isinstance(_raised_in_child(ChildFailed("BenchDependencyError", "no torch", "", 2)), BenchDependencyError)
    usage = _raised_in_child(ChildFailed("UsageError", "unknown suite", "", 2))
    assert isinstance(usage, UsageError) and str(usage) == "benchmark run: unknown suite"
    crash = _raised_in_child(ChildFailed("RuntimeError", "CUDA error", "", None))
    assert type(crash) is DriftcheckError and str(crash) == "benchmark run: RuntimeError: CUDA error"
