"""`within`: a call under a time limit returns its result, raises its own error, or DeadlineError on time."""

from __future__ import annotations

import threading
import time

import pytest

from driftcheck.api.bounded import within
from driftcheck.errors import DeadlineError, DriftcheckError, UsageError


def test_a_call_in_time_gives_its_result() -> None:
    assert within(5, lambda: 42, "the answer") == 42


def test_a_call_that_raises_raises_its_own_error() -> None:
    def fail() -> None:
        raise UsageError("nothing to check against")

    with pytest.raises(UsageError, match="nothing to check against"):
        within(5, fail, "the check")


def test_a_call_past_its_limit_is_a_deadline_error_on_time() -> None:
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(DeadlineError, match="the check did not finish within 0.2 s"):
        within(0.2, lambda: release.wait(30), "the check")
    assert time.monotonic() - started < 5
    release.set()  # the abandoned call ends; in the CLI the process would exit and take the daemon thread
    assert issubclass(DeadlineError, DriftcheckError)  # one line and exit 2 at the command line
