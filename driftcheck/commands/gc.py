"""`driftcheck gc`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck.analysis.render import human_size
from driftcheck.api.gc import gc
from driftcheck.commands.common import EXIT_OK, add_format, count
from driftcheck.snapshot.printable import printable


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not 0 <= value <= _MAX_DAYS:  # also refuses nan and inf (a date that far back overflows)
        raise argparse.ArgumentTypeError(f"{text} is not a number of days from 0 to {_MAX_DAYS:,}")
    return value


_MAX_DAYS = 100 * 366


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck gc` and its handler."""
    p.description = ("Remove snapshots from the local store, keeping each host's newest N (--keep-last) and/or "
                     "every snapshot younger than D days (--keep-days); a snapshot either keeps stays. Never "
                     "removed: a snapshot a baseline or a run record points at, and @before-boot, @boot and the "
                     "newest snapshot of every host. Also drops hash cache rows of this machine's files that are "
                     "gone, and gives the space back.")
    p.add_argument("--keep-last", type=count, metavar="N", help="keep each host's N newest snapshots")
    p.add_argument("--keep-days", type=_days, metavar="D", help="keep snapshots younger than D days")
    # No `-n` here: in driftcheck `-n` is `--limit` (log, runs).
    p.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    add_format(p)
    p.set_defaults(handler=_cmd_gc)


def _cmd_gc(args: argparse.Namespace) -> int:
    result = gc(keep_last=args.keep_last, keep_days=args.keep_days, dry_run=args.dry_run)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
        return EXIT_OK
    verb = "would remove" if result.dry_run else "removed"
    for entry in result.plan.remove:
        # Host and label may be a stranger's text (an imported snapshot): shown, never obeyed by the terminal.
        sys.stdout.write(f"{verb} {entry.id[:12]}  {entry.created_at[:19].replace('T', ' ')}  {printable(entry.host)}"
                         + (f"  '{printable(entry.label)}'" if entry.label else "") + "\n")
    pinned = [(entry, why) for entry, why in result.plan.keep if any(not w.startswith(("newest", "younger"))
                                                                     for w in why)]
    for entry, why in pinned:
        sys.stdout.write(f"kept {entry.id[:12]}  {printable(entry.host)}: {printable(', '.join(why))}\n")
    sys.stdout.write(f"gc: {verb} {len(result.plan.remove)} snapshot(s), kept {len(result.plan.keep)}"
                     + ("" if result.dry_run else f"; hash cache: dropped {result.hash_rows_dropped} row(s) of files "
                        f"gone; store {human_size(result.bytes_before)} -> {human_size(result.bytes_after)}")
                     + "\n")
    return EXIT_OK
