"""`python -m driftcheck` and the `driftcheck` console script.

The entry point lives here, not in `driftcheck.cli`, so that a Ctrl-C while the command line is still
being imported (the first tenths of a second) gives the same one line and exit 130 as one during the
work, never a traceback: only `driftcheck/__init__.py` (errors and the version) is imported before the
handler below is in place.
"""

from __future__ import annotations

import sys


def run() -> None:
    """Run the command line and exit with its code; an interrupt at any moment is one line and 130."""
    try:
        from driftcheck.cli import main

        code = main()
    except KeyboardInterrupt:
        sys.stderr.write("driftcheck: interrupted\n")
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    run()
