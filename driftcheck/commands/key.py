"""`driftcheck key`."""

from __future__ import annotations

import argparse
import json
from typing import Any

from driftcheck.commands.common import EXIT_OK
from driftcheck.snapshot.keys import load_signing_key


def add(sub: Any) -> None:
    """Register `driftcheck key` and its handler."""
    p = sub.add_parser("key", help="print your public signing key and its fingerprint",
                       description="Print the public key that signs your snapshots (created on first use) "
                                   "and its fingerprint; give either to `driftcheck verify --trust`.")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.set_defaults(handler=_cmd_key)


def _cmd_key(args: argparse.Namespace) -> int:
    key = load_signing_key()
    if args.format == "json":
        print(json.dumps({"algorithm": "ed25519", "public_key": key.public_key_b64,
                          "fingerprint": key.fingerprint, "path": str(key.path)}, sort_keys=True))
    else:
        print(f"public key:  {key.public_key_b64}\nfingerprint: {key.fingerprint}\nprivate key: {key.path}")
    return EXIT_OK
