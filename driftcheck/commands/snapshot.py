"""`driftcheck snapshot`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck import api
from driftcheck.commands.common import (
    EXIT_OK,
    STDOUT,
    add_bench_suite,
    add_budget,
    add_host,
    add_label,
    add_no_store,
    add_output,
    add_probe_selection,
    add_process_arguments,
    add_python,
    add_quiet,
    add_runs,
    add_server_argument,
    flag_terms,
    hash_progress_printer,
    keep,
    progress_printer,
    remote_host,
    run_progress,
    validate_host,
    validate_keep,
)
from driftcheck.errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck snapshot`, its handler and the check of its options."""
    p.description = ("Probe this machine (or, with --host, one over SSH), sign the result, keep it in the local "
                     "store and print its id. Probes run concurrently, each under its own time limit; a probe that "
                     "fails is recorded with its outcome and the rest goes on.")
    add_output(p, "also write the snapshot to this JSON file; `-o -` prints the snapshot JSON on stdout "
                  "(and nothing else there)")
    add_label(p)
    add_probe_selection(p)
    add_python(p, "the interpreter whose packages matter (e.g. your ML venv's python); default: ours, or python3 "
                  "on a --host")
    add_host(p)
    add_process_arguments(p)
    add_server_argument(p)
    p.add_argument("--replay", metavar="DIR", type=Path,
                   help="build the snapshot from a recording (`driftcheck record`) instead of this machine")
    p.add_argument("--deep", action="store_true",
                   help="also import torch in the target interpreter for its runtime facts (about a second)")
    p.add_argument("--no-sign", action="store_true", help="do not sign the snapshot")
    add_no_store(p)
    add_quiet(p)
    add_bench_suite(p, "also run this calibrated benchmark suite (after the other probes) and embed it as probe "
                       "`bench`; needs torch")
    add_runs(p, help="independent runs of --bench, each in its own process (default 1; 3 or more measure the "
                     "between-run spread verdicts need)")
    add_budget(p)
    p.set_defaults(handler=_cmd_snapshot, validate=_validate)


def _validate(args: argparse.Namespace) -> None:
    validate_keep(args)
    validate_host(args)
    if (args.runs or args.budget_s) and not args.bench:
        raise UsageError("--runs and --budget-s go with --bench SUITE; give the suite too")
    if args.host and args.replay is not None:
        raise UsageError("--host and --replay do not go together: a recording holds its machine's facts")
    if args.replay is not None and args.python:
        raise UsageError("--python and --replay do not go together: a recording holds its interpreter's facts")
    if args.replay is not None and args.server:
        raise UsageError("--server and --replay do not go together: a recording holds no server answers")
    if args.replay is not None and args.server_log:
        raise UsageError("--server-log and --replay do not go together: a recording holds no server log")


def _cmd_snapshot(args: argparse.Namespace) -> int:
    show_progress = not args.quiet and sys.stderr.isatty()
    with flag_terms(), remote_host(args) as host:
        from driftcheck.hosts.targets import LOCAL, REPLAY_PREFIX

        bench = api.BenchRequest(args.bench, args.runs or 1, args.budget_s) if args.bench else None
        # Stored by `keep` below, after -o is written, as before the library call existed.
        snapshot = api.take_snapshot(label=args.label, probes=args.probe or (), skip=args.skip or (),
                                     target=LOCAL if args.replay is None else f"{REPLAY_PREFIX}{args.replay}",
                                     python=None if host else args.python, pids=args.pid, processes=args.process,
                                     deep=args.deep, bench=bench, server=args.server, server_log=args.server_log,
                                     sign=not args.no_sign,
                                     keep=False, host=host, progress=progress_printer(show_progress),
                                     hash_progress=hash_progress_printer() if show_progress else None,
                                     step_progress=run_progress() if show_progress else None)
    where = keep(snapshot, args)
    server_note = api.server_probe_note(snapshot)
    if server_note:
        # Said even with -q: the user asked for this probe, and a snapshot without it is no silent success.
        sys.stderr.write(f"driftcheck: {server_note}\n")
    counts = ", ".join(f"{status} {n}" for status, n in snapshot.status_counts().items())
    note = api.hash_cache_note(snapshot)
    if note and not args.quiet:
        sys.stderr.write(note + "\n")
    if not args.quiet:
        sys.stderr.write(f"snapshot {snapshot.short_id} of {snapshot.host_name} saved to {where} "
                         f"({len(snapshot.probes)} probes: {counts})\n")
    if args.output != STDOUT:
        print(snapshot.short_id)
    return EXIT_OK
