"""`python -m driftcheck` and the `driftcheck` console script.

The entry point lives here, not in `driftcheck.cli`, so that a Ctrl-C while the command line is still
being imported (the first tenths of a second) gives the same one line and exit 130 as one during the
work, never a traceback: only `driftcheck/__init__.py` (errors and the version) is imported before the
handler below is in place. The command line and its command's module are imported with Ctrl-C held
until they are in (`_interrupts_held`), so an interrupt never lands inside the interpreter's import locking.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

# Not `typing.TYPE_CHECKING`: nothing is imported here that the entry point does not need before its
# handler is in place (typing alone takes ~10 ms, in which a Ctrl-C would print a traceback).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable


def _interrupts_held(load: Callable[[], tuple[Callable[..., int], Namespace]]) -> tuple[Callable[..., int], Namespace]:
    """`load()` with Ctrl-C held until it returns, then raised as KeyboardInterrupt if one came.

    `load` imports: a KeyboardInterrupt raised inside importlib's own locking is swallowed there ("Exception
    ignored in: <function _get_module_lock.<locals>.cb>", CPython 3.11) and can leave the import lock held,
    so the probe threads that import next wait for ever (seen once in CI, Ctrl-C 0.15 s after start)."""
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        loaded = load()
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt
    return loaded


def _parsed() -> tuple[Callable[..., int], Namespace]:
    from driftcheck.cli import main, parse

    return main, parse()


def run() -> None:
    """Run the command line and exit with its code; an interrupt at any moment is one line and 130."""
    if sys.argv[1:] == ["--version"]:
        # The parser would print this same line (cli.py declares it from VERSION_LINE too); building it first
        # (argparse, the commands' shared options, the terminal's width) would double the command's time.
        from driftcheck.snapshot.version import VERSION_LINE

        sys.stdout.write(VERSION_LINE + "\n")
        sys.exit(0)
    try:
        main, args = _interrupts_held(_parsed)
        code = main(parsed=args)
    except KeyboardInterrupt:
        code = 130
        sys.stderr.write("driftcheck: interrupted\n")
    if code == 130:
        # Leave at once: an interrupt that landed inside an import can make the interpreter's own shutdown
        # end the process by SIGINT instead of with the code (seen one time in three at 0.3 s).
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(130)
    # The work is done and its code decided. A Ctrl-C during the interpreter's own shutdown (joining threads,
    # atexit) would only turn a finished command into one killed by SIGINT (seen in CI: a snapshot saved,
    # then exit -2 for a Ctrl-C 2 s after its start), so from here it is ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(code)


if __name__ == "__main__":
    run()
