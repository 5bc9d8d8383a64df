"""`driftcheck show`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from driftcheck.commands.common import EXIT_OK, SNAPSHOT_REF_HELP
from driftcheck.render import snapshot_text
from driftcheck.snapshot.canonical import pretty_json
from driftcheck.snapshot.resolve import resolve_snapshot
from driftcheck.snapshot.signing import verify_document


def add(sub: Any) -> None:
    """Register `driftcheck show` and its handler."""
    p = sub.add_parser("show", help="print a snapshot", description="Print a snapshot's probes and facts.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP)
    p.add_argument("--format", choices=("text", "json", "yaml"), default="text", help="output format (default text)")
    p.set_defaults(handler=_cmd_show)


def _cmd_show(args: argparse.Namespace) -> int:
    snapshot = resolve_snapshot(args.snapshot)
    if args.format == "json":
        sys.stdout.write(pretty_json(snapshot.document))
    elif args.format == "yaml":
        sys.stdout.write(yaml.safe_dump(snapshot.document, sort_keys=True, allow_unicode=True))
    else:
        verdict = verify_document(snapshot.document)
        sys.stdout.write(snapshot_text(snapshot, verdict.fingerprint if verdict.intact else None))
    return EXIT_OK
