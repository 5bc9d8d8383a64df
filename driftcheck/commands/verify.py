"""`driftcheck verify`: is the snapshot intact, and who signed it."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck import api
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, SNAPSHOT_REF_HELP, add_format


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck verify` and its handler."""
    p.description = ("Check that a snapshot is signed and unaltered, and say by whom: you, a key you trust "
                     "(`driftcheck key trust`), or an unknown key. Exit 0 when intact and signed by you or a trusted "
                     "key (or one given with --trust), 1 when unsigned, altered or signed by an unknown key, 2 when "
                     "it cannot be read.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP)
    p.add_argument("--trust", action="append", metavar="KEY",
                   help="a public key or fingerprint to accept for this check only; repeatable")
    p.add_argument("--accept-new", action="store_true",
                   help="trust on first use: an intact snapshot signed by a key you have never seen adds that "
                        "key to your trusted keys (as OpenSSH's accept-new)")
    p.add_argument("--name", help="the name to trust a new key under, with --accept-new (default: its fingerprint)")
    add_format(p)
    p.set_defaults(handler=_cmd_verify)


def _cmd_verify(args: argparse.Namespace) -> int:
    verified = api.verify(args.snapshot, trust=args.trust or (), accept_new=args.accept_new, name=args.name)
    signer = verified.signer
    if args.format == "json":
        print(json.dumps(verified.to_json(), sort_keys=True))
    else:
        print(f"{verified.snapshot.source}: {_message(signer.text(), signer.state, verified.accepted)}")
        if signer.state == "unknown" and not verified.trusted:
            sys.stderr.write(f"driftcheck: compare {signer.fingerprint} with what its owner says their key is; "
                             f"then `driftcheck key trust {signer.fingerprint} --name NAME`\n")
    return EXIT_OK if verified.trusted else EXIT_DIFFERENT


def _message(text: str, state: str, accepted: bool) -> str:
    if state in ("you", "trusted"):
        return f"intact, {text}"
    if state == "unknown":
        return f"intact, {text}" + (" (accepted with --trust)" if accepted else ", which you do not trust")
    return text
