"""The `driftcheck` command line. Thin: it parses, calls the library, prints, and maps errors to exit codes.

Exit codes follow diff(1): 0 nothing relevant differs (or all is well), 1 differences (or a failed
verification), 2 trouble (bad input, unreadable snapshot, missing library or host).
Each command lives in its own module under `driftcheck.commands`; a new command is a new module there
and one entry in `COMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from driftcheck.commands import (
    baseline,
    bench,
    check,
    diff,
    explain,
    fleet,
    gc,
    importing,
    key,
    log,
    record,
    report,
    run,
    runs,
    schedule,
    show,
    snapshot,
    verify,
)
from driftcheck.commands.common import Parser
from driftcheck.errors import DriftcheckError
from driftcheck.snapshot.version import VERSION

COMMANDS = (snapshot, show, verify, key, log, diff, explain, check, baseline, bench, importing, record, gc,
            schedule, report, fleet, run, runs)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, one sub-command per module in `COMMANDS`."""
    parser = Parser(prog="driftcheck",
                     description="Record the state of a GPU benchmark/inference machine in signed snapshots, "
                                 "and compare two of them to see what changed.",
                     epilog="Exit codes: 0 no relevant difference / all well, 1 differences or a failed "
                            "verification, 2 trouble. Files live under $DRIFTCHECK_HOME when it is set.")
    parser.add_argument("--version", action="version", version=f"driftcheck {VERSION}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for command in COMMANDS:
        command.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except DriftcheckError as exc:
        sys.stderr.write(f"driftcheck: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("driftcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        # `driftcheck check | head`: the reader left before the end. Exit as a process killed by SIGPIPE
        # does (128 + 13), never 0: a gate's verdict must not turn into "all well" because of a pager.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
