"""`driftcheck import`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck.commands.common import EXIT_OK, add_label, add_no_store, add_output, keep, validate_keep
from driftcheck.errors import UsageError
from driftcheck.reports.formats import FORMATS
from driftcheck.snapshot.inputs import MAX_BYTES


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck import`, its handler and the check of its options."""
    titles = ", ".join(f"`{fmt.title}`" for fmt in FORMATS)
    p.description = ("Build a partial snapshot (origin 'imported') from the text reports users paste: "
                     f"{titles}; the format is detected from the content, and pasted noise (markdown fences, "
                     "<details> tags, log lines, CRLF) is tolerated. Each fact lands in the probe that owns it; what "
                     "no probe holds is kept under host.report (raw fields, and the lines nothing understood, "
                     "verbatim). Files of one machine combine: one report or GPU description plus one topology "
                     "matrix. A whole issue body is cut into sections (fences, <details>, the first lines of known "
                     "outputs), each read by its own format and merged into one snapshot; the more specific source "
                     "wins a fact, and a disagreement is kept under host.conflicts. Kept in the store like a snapshot "
                     "and unsigned unless --sign: a signature would vouch for facts driftcheck did not observe. "
                     "`diff` and `explain` also take such a file directly.")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="a pasted report, nvidia-smi output or whole issue body (repeatable); - reads standard input")
    add_output(p, "also write the snapshot to this JSON file")
    add_label(p, "a note kept with the snapshot (e.g. 'from issue 1234')")
    p.add_argument("--sign", action="store_true", help="sign it with your key (you vouch for the import)")
    add_no_store(p)
    p.set_defaults(handler=_cmd_import, validate=validate_keep)


def _stdin_text() -> str:
    data = sys.stdin.buffer.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise UsageError(f"standard input is larger than a report can be ({MAX_BYTES / 2**20:.0f} MiB at most)")
    return data.decode("utf-8", errors="replace")


def _cmd_import(args: argparse.Namespace) -> int:
    from driftcheck import api

    if sum(1 for path in args.files if str(path) == api.STDIN) > 1:
        raise UsageError("standard input (-) can be read once")  # before standard input is read
    stdin = _stdin_text() if any(str(path) == api.STDIN for path in args.files) else None
    # Stored by `keep` below, after -o is written, as before the library call existed.
    snapshot = api.import_reports(args.files, label=args.label, sign=args.sign, stdin=stdin, keep=False)
    where = keep(snapshot, args)
    host = snapshot.document["host"]
    kinds = ", ".join(f"{s['file']} ({s['format']})" for s in host["sources"])
    sys.stderr.write(f"imported {kinds} as snapshot {snapshot.short_id}, saved to {where}\n")
    for section in host.get("unread_sections") or []:
        sys.stderr.write(f"not read: {section['section']} ({section['reason']}), kept as text\n")
    for conflict in host.get("conflicts") or []:
        sys.stderr.write(f"conflict: {conflict['path']}: {conflict['kept']!r} from {conflict['kept_from']} kept, "
                         f"{conflict['other']!r} from {conflict['other_from']}\n")
    report = host.get("report")
    if report and report["unclaimed_count"]:
        sys.stderr.write(f"{report['unclaimed_count']} line(s) no parser understood, kept verbatim under "
                         "host.report.unclaimed (`driftcheck show --full` lists them)\n")
    print(snapshot.short_id)
    return EXIT_OK
