"""`driftcheck verify`."""

from __future__ import annotations

import argparse
import json

from driftcheck.analysis.references import resolve_snapshot
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, SNAPSHOT_REF_HELP, add_format
from driftcheck.snapshot.signing import verify_document


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck verify` and its handler."""
    p.description = ("Check that a snapshot is signed and unaltered. Exit 0 when intact (and signed by a trusted "
                     "key, if --trust is given), 1 when unsigned, altered or signed by another key, 2 when it "
                     "cannot be read.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP)
    p.add_argument("--trust", action="append", metavar="KEY",
                   help="a public key or fingerprint (from `driftcheck key`) to accept; repeatable")
    add_format(p)
    p.set_defaults(handler=_cmd_verify)


def _cmd_verify(args: argparse.Namespace) -> int:
    snapshot = resolve_snapshot(args.snapshot, check_signature=False)
    verdict = verify_document(snapshot.document, args.trust)
    if args.format == "json":
        print(json.dumps({"snapshot": snapshot.source, "id": snapshot.id, "status": verdict.status,
                          "fingerprint": verdict.fingerprint, "message": verdict.message}, sort_keys=True))
    else:
        print(f"{snapshot.source}: {verdict.message}")
    return EXIT_OK if verdict.intact else EXIT_DIFFERENT
