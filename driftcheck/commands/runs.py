"""`driftcheck runs`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from driftcheck.api.run_causes import change_points
from driftcheck.commands.common import EXIT_OK, add_format, add_label, add_limit, check_output_path, write_new_file
from driftcheck.runs.html import runs_html
from driftcheck.runs.reference import REFERENCE_HELP, resolve_run
from driftcheck.runs.render import run_detail_text, runs_text
from driftcheck.runs.store import RunStore


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck runs` and its handler."""
    p.description = ("List the runs `driftcheck run` recorded, oldest first, with their headline figures and any GPU "
                     "that throttled or was shared while they ran; or show one run in full; or write an offline "
                     "HTML page charting every figure over the runs, with a marker where the snapshot changed and "
                     "its top cause on hover.")
    p.add_argument("run", nargs="?", help=f"show this run in full: an id or {REFERENCE_HELP}")
    add_limit(p, "only the last N runs")
    add_label(p, "only the runs with this label")
    add_format(p)
    p.add_argument("--html", type=Path, metavar="FILE", help="write the HTML page of the runs to FILE")
    p.add_argument("--force", action="store_true", help="overwrite the --html file if it exists")
    p.set_defaults(handler=_cmd_runs)


def _cmd_runs(args: argparse.Namespace) -> int:
    store = RunStore()
    if args.run is not None:
        reference = args.run if args.run.startswith("run:") else f"run:{args.run}"
        run, _ = resolve_run(reference, store)
        if args.format == "json":
            print(json.dumps(run.to_json(), indent=2, sort_keys=True))
        else:
            sys.stdout.write(run_detail_text(run))
        return EXIT_OK
    if args.html is not None:
        check_output_path(args.html, args.force)
    runs = store.entries(args.limit, args.label)
    if args.html is not None:
        write_new_file(args.html, runs_html(runs, change_points(runs)), args.force)
        sys.stderr.write(f"wrote {args.html}: {len(runs)} run(s)\n")
        return EXIT_OK
    if args.format == "json":
        print(json.dumps([run.to_json() for run in runs], indent=2, sort_keys=True))
    else:
        sys.stdout.write(runs_text(runs))
    return EXIT_OK
