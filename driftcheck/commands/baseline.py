"""`driftcheck baseline`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from driftcheck import api
from driftcheck.commands.common import EXIT_OK, SNAPSHOT_REF_HELP, Parser
from driftcheck.render import snapshot_text
from driftcheck.snapshot.baselines import Baselines
from driftcheck.snapshot.resolve import resolve_snapshot
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.store import Store


def add(sub: Any) -> None:
    """Register `driftcheck baseline` and its handler."""
    p = sub.add_parser("baseline", help="name snapshots as baselines (baseline:NAME)",
                       description="Named baselines: a name pointing at a stored snapshot, usable anywhere a "
                                   "snapshot is as baseline:NAME. `driftcheck check` compares with `default`.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    save = actions.add_parser("save", help="name a snapshot (default: take one now)")
    save.add_argument("name", help="the baseline's name (letters, digits, . _ -)")
    save.add_argument("snapshot", nargs="?", help=f"{SNAPSHOT_REF_HELP}; default: a fresh snapshot of all probes")
    save.add_argument("--force", action="store_true", help="re-point an existing name")
    save.add_argument("--label", help="label of the fresh snapshot (when SNAP is not given)")
    save.add_argument("--python", metavar="PATH", help="the interpreter whose packages matter (fresh snapshot)")
    lst = actions.add_parser("list", help="list baselines")
    lst.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    show = actions.add_parser("show", help="print a baseline's snapshot")
    show.add_argument("name")
    show.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    rm = actions.add_parser("rm", help="forget a baseline (its snapshot stays in the store)")
    rm.add_argument("name")
    p.set_defaults(handler=_cmd_baseline)


def _cmd_baseline(args: argparse.Namespace) -> int:
    store = Store()
    baselines = Baselines(store)
    if args.action == "save":
        snapshot = resolve_snapshot(args.snapshot, store) if args.snapshot else \
            api.snapshot(label=args.label or f"baseline {args.name}", python=args.python, keep=False)
        saved = baselines.save(args.name, snapshot, args.force)
        print(f"baseline {saved.name} -> {saved.snapshot_id[:12]} ({saved.host})")
    elif args.action == "list":
        entries = baselines.entries()
        if args.format == "json":
            print(json.dumps([e.to_json() for e in entries], indent=2, sort_keys=True))
        elif not entries:
            print("no baselines yet; `driftcheck baseline save NAME [SNAP]`")
        else:
            for e in entries:
                print(f"{e.name}  {e.snapshot_id[:12]}  {e.saved_at[:19].replace('T', ' ')}  {e.host}"
                      + (f"  {e.label!r}" if e.label else ""))
    elif args.action == "show":
        entry = baselines.get(args.name)
        snapshot = baselines.snapshot(args.name)
        if args.format == "json":
            print(json.dumps({**entry.to_json(), "snapshot": snapshot.document}, indent=2, sort_keys=True))
        else:
            print(f"baseline {entry.name} (saved {entry.saved_at})")
            verdict = verify_document(snapshot.document)
            sys.stdout.write(snapshot_text(snapshot, verdict.fingerprint if verdict.intact else None))
    else:
        removed = baselines.remove(args.name)
        print(f"baseline {removed.name} removed (snapshot {removed.snapshot_id[:12]} stays in the store)")
    return EXIT_OK
