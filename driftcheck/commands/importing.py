"""`driftcheck import`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from driftcheck.commands.common import EXIT_OK, check_keep, keep
from driftcheck.reports.formats import FORMATS
from driftcheck.reports.importer import import_snapshot
from driftcheck.snapshot.keys import load_signing_key


def add(sub: Any) -> None:
    """Register `driftcheck import` and its handler."""
    titles = ", ".join(f"`{fmt.title}`" for fmt in FORMATS)
    p = sub.add_parser("import", help="build a snapshot from pasted environment reports and nvidia-smi outputs",
                       description="Build a partial snapshot (origin 'imported') from the text reports users "
                                   f"paste: {titles}; the format is detected from the content, and pasted noise "
                                   "(markdown fences, <details> tags, log lines, CRLF) is tolerated. Each fact "
                                   "lands in the probe that owns it; what no probe holds is kept under "
                                   "host.report (raw fields, and the lines nothing understood, verbatim). Files "
                                   "of one machine combine: one report or GPU description plus one topology "
                                   "matrix. Kept in the store like a snapshot and unsigned unless --sign: a "
                                   "signature would vouch for facts driftcheck did not observe. `diff` and "
                                   "`explain` also take such a file directly.")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="a pasted report or nvidia-smi output "
                                                                        "(repeatable)")
    p.add_argument("-o", "--output", type=Path, help="also write the snapshot to this JSON file")
    p.add_argument("--force", action="store_true", help="overwrite the --output file if it exists")
    p.add_argument("--label", help="a note kept with the snapshot (e.g. 'from issue 1234')")
    p.add_argument("--sign", action="store_true", help="sign it with your key (you vouch for the import)")
    p.add_argument("--no-store", action="store_true", help="do not keep it in the local store (needs -o)")
    p.set_defaults(handler=_cmd_import)


def _cmd_import(args: argparse.Namespace) -> int:
    check_keep(args)
    snapshot = import_snapshot(args.files, label=args.label, key=load_signing_key() if args.sign else None)
    where = keep(snapshot, args)
    host = snapshot.document["host"]
    kinds = ", ".join(f"{s['file']} ({s['format']})" for s in host["sources"])
    sys.stderr.write(f"imported {kinds} as snapshot {snapshot.short_id}, saved to {where}\n")
    report = host.get("report")
    if report and report["unclaimed_count"]:
        sys.stderr.write(f"{report['unclaimed_count']} line(s) no parser understood, kept verbatim under "
                         "host.report.unclaimed (`driftcheck show --full` lists them)\n")
    print(snapshot.short_id)
    return EXIT_OK
