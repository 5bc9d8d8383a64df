"""`python -m driftcheck` and the `driftcheck` console script.

The entry point lives here, not in `driftcheck.cli`, so that a Ctrl-C while the command line is still
being imported (the first tenths of a second) gives the same one line and exit 130 as one during the
work, never a traceback: only `driftcheck/__init__.py` (errors and the version) is imported before the
handler below is in place.
"""

from __future__ import annotations

import contextlib
import os
import sys


def run() -> None:
    """Run the command line and exit with its code; an interrupt at any moment is one line and 130."""
    try:
        from driftcheck.cli import main

        code = main()
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
    sys.exit(code)


if __name__ == "__main__":
    run()
