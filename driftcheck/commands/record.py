"""`driftcheck record`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck.commands.common import (
    EXIT_OK,
    add_host,
    add_probe_selection,
    add_process_arguments,
    add_python,
    add_quiet,
    flag_terms,
    probe_options,
    progress_printer,
    remote_host,
    validate_host,
)
from driftcheck.hosts.targets import local_host
from driftcheck.probes.prober import Prober
from driftcheck.probes.record import ensure_empty_directory


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
    ensure_empty_directory(args.directory)
    options = probe_options(args)
    show_progress = not args.quiet and sys.stderr.isatty()
    with flag_terms(), remote_host(args) as host:
        prober = Prober.for_user(host or local_host(args.python), options, sign=False,
                                 progress=progress_printer(show_progress))
        probes = prober.probes(args.probe, args.skip)
        result = prober.record(args.directory, probes)
    counts: dict[str, int] = {}
    for outcome in result.outcomes.values():
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    summary = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    if not args.quiet:
        sys.stderr.write(f"recorded {result.files} files and {result.commands} commands from {len(probes)} "
                         f"probes ({summary}); replay with: driftcheck snapshot --replay {result.directory}\n")
    print(result.directory)
    return EXIT_OK
