"""Work begun in a thread of its own and waited for where its result is needed: what a snapshot or a run can do
while it waits on something else (the target interpreter, the command's last output).

`start` begins it once, from whichever thread asks first, and ignores its arguments, so it can serve as a probe's
progress callback. `result` waits for it (beginning it when nothing did) and returns its value, or raises what
it raised in the waiting thread: an error is never lost in the worker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Background(Generic[T]):
    """`work()` in a daemon thread named `name`, begun by `start`, its value or error given by `result`."""

    def __init__(self, work: Callable[[], T], name: str) -> None:
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._finished = False
        self._started = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self, *_progress: object) -> None:
        """Begin the work, once (the arguments of a probe's progress report are not used)."""
        if not self._started:
            self._started = True
            self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
            self._finished = True
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread, by `result`
            self._error = exc

    def result(self) -> T:
        """The work's value once it has ended (begun here if nothing started it); what it raised is raised here."""
        self.start()
        self._thread.join()
        if not self._finished:
            raise self._error or RuntimeError(f"{self._thread.name} ended without a result")
        return cast(T, self._value)
