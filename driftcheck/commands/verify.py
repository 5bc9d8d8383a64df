"""`driftcheck verify`: is the snapshot intact, and who signed it."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck.api.references import resolve_snapshot
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, SNAPSHOT_REF_HELP, add_format
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.trust import TrustStore


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
    snapshot = resolve_snapshot(args.snapshot, check_signature=False)
    store = TrustStore()
    signer = store.signer_of(snapshot.document)
    accepted = False
    if signer.state == "unknown" and args.trust:
        accepted = verify_document(snapshot.document, args.trust).intact
    elif signer.state == "unknown" and args.accept_new and signer.fingerprint:
        store.add(signer.fingerprint, args.name)
        signer = store.signer_of(snapshot.document)
    ok = signer.trusted or accepted
    if args.format == "json":
        print(json.dumps({"snapshot": snapshot.source, "id": snapshot.id, "status": _status(signer.state, ok),
                          "signer": signer.to_json(), "trusted": ok}, sort_keys=True))
    else:
        print(f"{snapshot.source}: {_message(signer.text(), signer.state, accepted)}")
        if signer.state == "unknown" and not ok:
            sys.stderr.write(f"driftcheck: compare {signer.fingerprint} with what its owner says their key is; "
                             f"then `driftcheck key trust {signer.fingerprint} --name NAME`\n")
    return EXIT_OK if ok else EXIT_DIFFERENT


def _status(state: str, ok: bool) -> str:
    if state in ("unsigned", "altered"):
        return state
    return "valid" if ok else "untrusted"


def _message(text: str, state: str, accepted: bool) -> str:
    if state in ("you", "trusted"):
        return f"intact, {text}"
    if state == "unknown":
        return f"intact, {text}" + (" (accepted with --trust)" if accepted else ", which you do not trust")
    return text
