"""Signal handlers that stand in for the previous ones while a block runs, and only there.

Three blocks need it: `driftcheck run` relays SIGINT/SIGTERM/SIGHUP to its command
(`driftcheck.runs.execute`), a trial turns SIGTERM/SIGHUP into an exception so that every `finally` stops its
processes (`driftcheck.runs.trial`), and stopping a process tree defers interrupts to its end
(`driftcheck.hosts.process_tree`, below both the runs and the Slurm fleet that stop trees).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from types import FrameType

Handler = Callable[[int, FrameType | None], object]
# The signals that end a command line's work: Ctrl-C, `kill`, a closed terminal.
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def handlers_installed(handler: Handler, signums: Iterable[int] = ENDING) -> Iterator[bool]:
    """While in the block, `handler` handles `signums`; the previous handlers are back afterwards, whatever
    happens. Yields whether it was installed: Python runs signal handlers in the main thread only, so
    elsewhere nothing changes (False)."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield True
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
