"""`driftcheck key`."""

from __future__ import annotations

import argparse
import json

from driftcheck.commands.common import EXIT_OK, add_format
from driftcheck.snapshot.keys import load_signing_key


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck key [show]` and its handler."""
    p.description = ("Print the public key that signs your snapshots (created on first use) and its fingerprint; "
                     "give either to `driftcheck verify --trust`.")
    p.add_argument("action", nargs="?", choices=("show",), default="show",
                   help="show (the default): print the key")
    add_format(p)
    p.set_defaults(handler=_cmd_key_show)


def _cmd_key_show(args: argparse.Namespace) -> int:
    key = load_signing_key()
    if args.format == "json":
        print(json.dumps({"algorithm": "ed25519", "public_key": key.public_key_b64,
                          "fingerprint": key.fingerprint, "path": str(key.path)}, sort_keys=True))
    else:
        print(f"public key:  {key.public_key_b64}\nfingerprint: {key.fingerprint}\nprivate key: {key.path}")
    return EXIT_OK
