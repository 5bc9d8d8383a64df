"""`driftcheck key [show]`, `key trust`, `key untrust`, `key trusted`.

The trust store is imported by the actions that use it: `key show` is the start-up benchmark's command,
and the store brings the signature checks and dataclasses with it.
"""

from __future__ import annotations

import argparse
import json

from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, Parser, add_format
from driftcheck.errors import UsageError
from driftcheck.snapshot.keys import load_signing_key


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck key [show|trust|untrust|trusted]`, one handler per action."""
    p.description = ("Your signing key, and the keys you trust. `key` (or `key show`) prints the public key that "
                     "signs your snapshots (created on first use) and its fingerprint, for others to trust; "
                     "`key trust` trusts someone else's after you compared its fingerprint with theirs; `key "
                     "trusted` lists the keys you trust (yours always is).")
    add_format(p)
    p.set_defaults(handler=_cmd_key_show)
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    show = actions.add_parser("show", help="print your public key and fingerprint (the default)")
    add_format(show)
    show.set_defaults(handler=_cmd_key_show)
    trust = actions.add_parser("trust", help="trust a key: its snapshots then read 'signed by NAME'")
    trust.add_argument("key", metavar="FINGERPRINT|PUBLIC_KEY",
                       help="the key's fingerprint (SHA256:..., as its owner's `driftcheck key` prints it) or its "
                            "public key; compare it with what its owner says before trusting it")
    trust.add_argument("--name", help="the name its snapshots are shown under (default: its fingerprint)")
    trust.set_defaults(handler=_cmd_key_trust)
    untrust = actions.add_parser("untrust", help="stop trusting a key")
    untrust.add_argument("key", metavar="FINGERPRINT", help="the key's fingerprint or public key")
    untrust.set_defaults(handler=_cmd_key_untrust)
    trusted = actions.add_parser("trusted", help="list the keys you trust, yours first")
    add_format(trusted)
    trusted.set_defaults(handler=_cmd_key_trusted)


def _cmd_key_show(args: argparse.Namespace) -> int:
    key = load_signing_key()
    if args.format == "json":
        print(json.dumps({"algorithm": "ed25519", "public_key": key.public_key_b64,
                          "fingerprint": key.fingerprint, "path": str(key.path)}, sort_keys=True))
    else:
        print(f"public key:  {key.public_key_b64}\nfingerprint: {key.fingerprint}\nprivate key: {key.path}")
    return EXIT_OK


def _cmd_key_trust(args: argparse.Namespace) -> int:
    from driftcheck.snapshot.trust import TrustStore

    store = TrustStore()
    added = store.add(args.key, args.name)
    own = " (your own key: trusted already)" if added.fingerprint == store.own_fingerprint() else ""
    print(f"trusted {added.fingerprint} as {added.name}{own}")
    return EXIT_OK


def _cmd_key_untrust(args: argparse.Namespace) -> int:
    from driftcheck.snapshot.trust import TrustStore, normalize_fingerprint

    store = TrustStore()
    wanted = normalize_fingerprint(args.key)
    if wanted == store.own_fingerprint():
        raise UsageError(f"{wanted} is your own key: it signs your snapshots and is always trusted")
    if not store.remove(wanted):
        print(f"{wanted} was not among your trusted keys (`driftcheck key trusted` lists them)")
        return EXIT_DIFFERENT
    print(f"no longer trusted: {wanted}")
    return EXIT_OK


def _cmd_key_trusted(args: argparse.Namespace) -> int:
    from driftcheck.snapshot.trust import TrustStore

    store = TrustStore()
    own = load_signing_key().fingerprint
    rows = [{"fingerprint": own, "name": "you"}] + \
        [{"fingerprint": k.fingerprint, "name": k.name} for k in store.entries() if k.fingerprint != own]
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print("".join(f"{row['fingerprint']}  {row['name']}\n" for row in rows), end="")
    return EXIT_OK
