"""`driftcheck log`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck import api
from driftcheck.analysis.render import log_text
from driftcheck.commands.common import EXIT_OK, add_format, add_limit


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck log` and its handler."""
    p.description = ("List the snapshots in the local store, newest first; the first column is the N of @N. A line "
                     "marks each reboot (a new boot id: @before-boot is the snapshot below the newest such line); "
                     "the last line gives the store's size.")
    add_limit(p, "show at most N snapshots (N >= 1)")
    add_format(p)
    p.set_defaults(handler=_cmd_log)


def _cmd_log(args: argparse.Namespace) -> int:
    listed = api.log(limit=args.limit)
    if args.format == "json":
        print(json.dumps(listed.to_json(), indent=2, sort_keys=True))
    else:
        sys.stdout.write(log_text(listed.entries, listed.size_bytes))
    return EXIT_OK
