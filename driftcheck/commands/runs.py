"""`driftcheck runs`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from driftcheck.api.runs import RUN_REFERENCE_HELP, run_history, run_record
from driftcheck.commands.common import EXIT_OK, add_format, add_label, add_limit, check_output_path, write_new_file
from driftcheck.runs.html import runs_html
from driftcheck.runs.render import run_detail_text, runs_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck runs` and its handler."""
    p.description = ("List the runs `driftcheck run` recorded, oldest first, with their headline figures and any GPU "
                     "that throttled or was shared while they ran; or show one run in full; or write an offline "
                     "HTML page charting every figure over the runs, with a marker where the snapshot changed and "
                     "its top cause on hover.")
    p.add_argument("run", nargs="?", help=f"show this run in full: an id or {RUN_REFERENCE_HELP}")
    add_limit(p, "only the last N runs")
    add_label(p, "only the runs with this label")
    add_format(p)
    p.add_argument("--html", type=Path, metavar="FILE", help="write the HTML page of the runs to FILE")
    p.add_argument("--force", action="store_true", help="overwrite the --html file if it exists")
    p.set_defaults(handler=_cmd_runs)


def _cmd_runs(args: argparse.Namespace) -> int:
    if args.run is not None:
        run = run_record(args.run)
        if args.format == "json":
            print(json.dumps(run.to_json(), indent=2, sort_keys=True))
        else:
            sys.stdout.write(run_detail_text(run))
        return EXIT_OK
    if args.html is not None:
        check_output_path(args.html, args.force)
    history = run_history(limit=args.limit, label=args.label, causes=args.html is not None)
    if args.html is not None:
        write_new_file(args.html, runs_html(history.runs, history.change_points), args.force)
        sys.stderr.write(f"wrote {args.html}: {len(history.runs)} run(s)\n")
        return EXIT_OK
    if args.format == "json":
        print(json.dumps(history.to_json(), indent=2, sort_keys=True))
    else:
        sys.stdout.write(runs_text(history.runs))
    return EXIT_OK
