"""`driftcheck diff`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck import api
from driftcheck.analysis.render import diff_text
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, SNAPSHOT_REF_HELP, add_format, add_require_trusted


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck diff` and its handler."""
    p.description = ("Compare snapshot A (before) with B (after), the categories of the likeliest causes first. A "
                     "or B may be a pasted report (collect_env, check_env, nvidia-smi), imported on the fly; then "
                     "only the facts both sides hold are compared. Exit 0 when nothing relevant differs, 1 when "
                     "something does, 2 when a snapshot cannot be read.")
    p.add_argument("a", help=SNAPSHOT_REF_HELP)
    p.add_argument("b", help=SNAPSHOT_REF_HELP)
    add_format(p)
    p.add_argument("--all", action="store_true",
                   help="also show readings (values that move on their own: clocks, free memory, the taking)")
    add_require_trusted(p)
    p.set_defaults(handler=_cmd_diff)


def _cmd_diff(args: argparse.Namespace) -> int:
    result = api.diff(args.a, args.b, all=args.all, require_trusted=args.require_trusted)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        # A reading a plain diff hides (a clock under load, the boot id) is shown when a cause rests on it.
        sys.stdout.write("".join(line + "\n" for line in result.signers.lines()))
        sys.stdout.write(diff_text(result.diff, args.all, also=result.shown_readings(),
                                   ranked=[e.category for e in result.explained.explanations]))
    return EXIT_DIFFERENT if result.drifted else EXIT_OK
