"""`driftcheck bisect`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck.api.bisect import bisect
from driftcheck.commands import try_
from driftcheck.commands.common import flag_terms
from driftcheck.errors import UsageError
from driftcheck.runs.render import bisection_lines


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck bisect`: the options of `try`, for two variants that differ by environment."""
    try_.add_arguments(p)
    p.usage = "%(prog)s [--a CHANGES] --b CHANGES [options] -- CMD [ARGS...]"
    p.description = (
        "When B differs from A by several changes, find the smallest set that reproduces B's shift: delta "
        "debugging (ddmin) over B's changes, each step an interleaved trial as `driftcheck try` runs (A against A "
        "with those changes). The changes are B's environment variables (--b), or, with --a-python and "
        "--b-python alone, the package versions that differ between the two interpreters: a step runs A's "
        "interpreter with exact copies of B's installed files of those packages first on PYTHONPATH (a scratch "
        "overlay, removed at the end; neither environment is touched). A step that resolves nothing counts as "
        "not reproducing, so noise can only leave more changes in the set, not name one that showed nothing; the "
        "changes left out are then tried together. --budget-s bounds the whole bisection; every run is a run "
        "record, so a bisection stopped by its budget or Ctrl-C goes on with --resume (the same command): the "
        "trials its records show finished are decided again from their figures, not rerun. Exit 0: no shift to "
        "bisect, 1: culprits named, 2: trouble, 3: stopped by the budget (resume with --resume).")
    p.epilog = ("examples: driftcheck bisect --b 'OMP_NUM_THREADS=1 NCCL_ALGO=Ring' -- python bench.py\n"
                "  driftcheck bisect --a-python /old-env/bin/python --b-python /new-env/bin/python -- python bench.py")
    p.add_argument("--resume", action="store_true",
                   help="reuse the finished trials that an earlier run of this same bisection (command, variants, "
                        "options) recorded; the steps reused are said")
    p.set_defaults(handler=_cmd_bisect, validate=_validate)


def _validate(args: argparse.Namespace) -> None:
    try_.validate(args)
    if args.resume and args.no_record:
        raise UsageError("--resume reads the run records of the earlier bisection; leave out --no-record")
    if not args.b and not (args.a_python and args.b_python):
        raise UsageError("give B's environment changes to bisect (e.g. --b 'OMP_NUM_THREADS=1 NCCL_ALGO=Ring'), or "
                         "two interpreters (--a-python, --b-python) whose package versions to bisect")


def _cmd_bisect(args: argparse.Namespace) -> int:
    with flag_terms():
        found = bisect(try_.command(args), **try_.trial_options(args), resume=args.resume,
                       note=None if args.quiet else try_.note)
    if args.format == "json":
        sys.stdout.write(json.dumps(found.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(bisection_lines(found)) + "\n")
    if not found.finished:
        return 3
    return 1 if found.culprits else 0
