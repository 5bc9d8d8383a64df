"""`driftcheck snapshot`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from driftcheck import api
from driftcheck.commands.common import (
    EXIT_OK,
    STDOUT,
    add_host_arguments,
    add_process_arguments,
    add_server_argument,
    check_keep,
    flag_terms,
    hash_progress_printer,
    keep,
    positive_int,
    progress_printer,
    remote_host,
)
from driftcheck.errors import UsageError
from driftcheck.hosts.targets import LOCAL, REPLAY_PREFIX
from driftcheck.probes import probe_names
from driftcheck.probes.kernels import hash_cache_note


def add(sub: Any) -> None:
    """Register `driftcheck snapshot` and its handler."""
    p = sub.add_parser("snapshot", help="probe this machine (or one over SSH) and keep a signed snapshot",
                       description="Probe this machine (or, with --host, one over SSH), sign the result, keep it "
                                   "in the local store and print its id. Probes run concurrently, each under its "
                                   "own time limit; a probe that fails is recorded with its outcome and the rest "
                                   "goes on.")
    p.add_argument("-o", "--output", type=Path,
                   help="also write the snapshot to this JSON file; `-o -` prints the snapshot JSON on stdout "
                        "(and nothing else there)")
    p.add_argument("--force", action="store_true", help="overwrite the --output file if it exists")
    p.add_argument("--label", help="a note kept with the snapshot (e.g. 'before reboot')")
    p.add_argument("--probe", action="append", metavar="NAME",
                   help=f"take only this probe (repeatable); known: {', '.join(probe_names())}")
    p.add_argument("--skip", action="append", metavar="NAME", help="leave this probe out (repeatable)")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter whose packages matter (e.g. your ML venv's python); default: ours, or "
                        "python3 on a --host")
    add_host_arguments(p)
    add_process_arguments(p)
    add_server_argument(p)
    p.add_argument("--replay", metavar="DIR", type=Path,
                   help="build the snapshot from a recording (`driftcheck record`) instead of this machine")
    p.add_argument("--deep", action="store_true",
                   help="also import torch in the target interpreter for its runtime facts (about a second)")
    p.add_argument("--no-sign", action="store_true", help="do not sign the snapshot")
    p.add_argument("--no-store", action="store_true", help="do not keep it in the local store (needs -o)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--bench", choices=("quick", "standard", "full"),
                   help="also run this calibrated benchmark suite (after the other probes) and embed it as "
                        "probe `bench`; needs torch")
    p.add_argument("--bench-runs", type=positive_int, metavar="N",
                   help="independent runs of --bench, each in its own process (default 1; 3 or more measure the "
                        "between-run spread verdicts need)")
    p.add_argument("--bench-budget-s", type=float, metavar="S", help=argparse.SUPPRESS)
    p.set_defaults(handler=_cmd_snapshot)


def _cmd_snapshot(args: argparse.Namespace) -> int:
    check_keep(args)
    if args.bench_runs and not args.bench:
        raise UsageError("--bench-runs sets the runs of --bench SUITE; give the suite too")
    if args.host and args.replay is not None:
        raise UsageError("--host and --replay do not go together: a recording holds its machine's facts")
    if args.replay is not None and args.python:
        raise UsageError("--python and --replay do not go together: a recording holds its interpreter's facts")
    if args.replay is not None and args.server:
        raise UsageError("--server and --replay do not go together: a recording holds no server answers")
    show_progress = not args.quiet and sys.stderr.isatty()
    with flag_terms(runs="--bench-runs", budget_s="--bench-budget-s"), remote_host(args) as host:
        bench = api.BenchRequest(args.bench, args.bench_runs or 1, args.bench_budget_s) if args.bench else None
        # Stored by `keep` below, after -o is written, as before the library call existed.
        request = api.SnapshotRequest(label=args.label, probes=args.probe or (), skip=args.skip or (),
                                      target=LOCAL if args.replay is None else f"{REPLAY_PREFIX}{args.replay}",
                                      python=None if host else args.python, pids=args.pid, processes=args.process,
                                      deep=args.deep, bench=bench, server=args.server, sign=not args.no_sign,
                                      keep=False)
        snapshot = api.take_snapshot(request, host=host, progress=progress_printer(show_progress),
                                     hash_progress=hash_progress_printer() if show_progress else None)
    where = keep(snapshot, args)
    counts = ", ".join(f"{status} {n}" for status, n in snapshot.status_counts().items())
    note = hash_cache_note(snapshot.probe_data("kernels"))
    if note and not args.quiet:
        sys.stderr.write(note + "\n")
    if not args.quiet:
        sys.stderr.write(f"snapshot {snapshot.short_id} of {snapshot.host_name} saved to {where} "
                         f"({len(snapshot.probes)} probes: {counts})\n")
    if args.output != STDOUT:
        print(snapshot.short_id)
    return EXIT_OK
