"""`driftcheck record`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck import api
from driftcheck.commands.common import (
    EXIT_OK,
    add_host,
    add_probe_selection,
    add_process_arguments,
    add_python,
    add_quiet,
    flag_terms,
    progress_printer,
    validate_host,
)
from driftcheck.hosts.targets import LOCAL


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck record`, its handler and the check of its options."""
    p.description = ("Run the probes and save everything they read (files, listings, command output, interpreter "
                     "facts) to DIR, with secrets redacted as in a snapshot. `driftcheck snapshot --replay DIR` "
                     "builds a snapshot from it, here or on another machine, with this or a newer driftcheck. DIR "
                     "must be new or empty.")
    p.add_argument("directory", type=Path, metavar="DIR", help="a new or empty directory")
    add_probe_selection(p, "record only this probe")
    add_python(p)
    add_host(p)
    add_process_arguments(p)
    add_quiet(p)
    p.set_defaults(handler=_cmd_record, validate=validate_host)


def _cmd_record(args: argparse.Namespace) -> int:
    show_progress = not args.quiet and sys.stderr.isatty()
    with flag_terms():
        result = api.record(args.directory, probes=args.probe or (), skip=args.skip or (),
                            target=LOCAL if args.host is None else args.host, python=args.python,
                            identity=args.identity, accept_new_host_key=args.accept_new_host_key, pids=args.pid,
                            processes=args.process, progress=progress_printer(show_progress))
    counts: dict[str, int] = {}
    for outcome in result.outcomes.values():
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    summary = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    if not args.quiet:
        sys.stderr.write(f"recorded {result.files} files and {result.commands} commands from "
                         f"{len(result.outcomes)} probes ({summary}); replay with: driftcheck snapshot --replay "
                         f"{result.directory}\n")
    print(result.directory)
    return EXIT_OK
