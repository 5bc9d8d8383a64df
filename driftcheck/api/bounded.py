"""A call run within a time limit: for callers that are killed at a deadline (Slurm's health check program)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from driftcheck.errors import DeadlineError

T = TypeVar("T")


def within(seconds: float, call: Callable[[], T], what: str) -> T:
    """`call()`'s result, or DeadlineError when it runs past `seconds`; its exception as it raised it.

    The call runs in a daemon thread, so a probe that hangs cannot keep the process alive past its answer:
    the caller reports and exits, and the thread ends with the process.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the caller's thread, raised there as it was
            failure.append(exc)

    worker = threading.Thread(target=run, name=f"driftcheck {what}", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise DeadlineError(f"{what} did not finish within {seconds:g} s")
    if failure:
        raise failure[0]
    return outcome[0]
