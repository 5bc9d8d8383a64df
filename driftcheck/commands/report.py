"""`driftcheck report`."""

from __future__ import annotations

import argparse
import sys

from driftcheck import api
from driftcheck.commands.common import EXIT_OK, SNAPSHOT_REF_HELP, add_output


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck report` and its handler."""
    p.description = ("Write report.md, ready to paste into a GitHub issue (the summary as a table, each probe in a "
                     "collapsible <details> section, with --against the explanation of what changed; kept under "
                     "GitHub's 65,536-character limit, saying what was cut), and the signed snapshot beside it "
                     "with a line telling the reader how to verify it and diff it against their machine. Existing "
                     "files are never overwritten without --force.")
    p.add_argument("snapshot", nargs="?", default="@latest", help=SNAPSHOT_REF_HELP + " (default @latest)")
    p.add_argument("--against", metavar="REF", help="also explain what changed since this snapshot (e.g. @prev)")
    add_output(p, "directory to write into (default driftcheck-report-<id>)", metavar="DIR",
               force_help="overwrite existing report files")
    p.add_argument("--bundle", action="store_true", help="write one DIR.tar.gz holding both files instead")
    p.add_argument("--anonymize", action="store_true",
                   help="mask host names, user names, IP and MAC addresses and home paths (the same name gives "
                        "the same token every time); the masked snapshot is signed again with your key")
    p.set_defaults(handler=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    files = api.report(args.snapshot, against=args.against, output=args.output, bundle=args.bundle,
                       anonymize=args.anonymize, force=args.force)
    where = files.bundle or files.markdown
    note = ", some probe sections cut to fit" if files.cut else ""
    sys.stderr.write(f"wrote {where} ({files.length:,} characters{note})"
                     + (f" and {files.snapshot}" if files.snapshot else "") + "\n")
    print(where)
    return EXIT_OK
