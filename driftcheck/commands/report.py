"""`driftcheck report`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.render import explain_markdown
from driftcheck.api.references import resolve_snapshot
from driftcheck.commands.common import EXIT_OK, SNAPSHOT_REF_HELP, add_output
from driftcheck.reports.anonymize import Anonymizer
from driftcheck.reports.report import prepare, write_report
from driftcheck.snapshot.keys import load_redaction_secret, load_signing_key
from driftcheck.store.snapshots import Store


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
    store = Store()
    snapshot = resolve_snapshot(args.snapshot, store)
    reference = resolve_snapshot(args.against, store) if args.against else None
    anonymizer = Anonymizer(load_redaction_secret()) if args.anonymize else None
    attached = prepare(snapshot, anonymizer, load_signing_key() if anonymizer else None)
    changes = None
    if reference is not None:
        before = prepare(reference, anonymizer, None)
        changes = explain_markdown(explain(diff_snapshots(before, attached)))
    out_dir = args.output or Path(f"driftcheck-report-{attached.short_id}")
    files = write_report(attached, out_dir, changes=changes, against=args.against, bundle=args.bundle,
                         force=args.force)
    where = files.bundle or files.markdown
    note = ", some probe sections cut to fit" if files.cut else ""
    sys.stderr.write(f"wrote {where} ({files.length:,} characters{note})"
                     + (f" and {files.snapshot}" if files.snapshot else "") + "\n")
    print(where)
    return EXIT_OK
