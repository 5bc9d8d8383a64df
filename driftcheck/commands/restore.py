"""`driftcheck restore`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck.api.restore import EXPORTS, INSTALLERS, Restored, restore, restore_export
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, SNAPSHOT_REF_HELP, add_format
from driftcheck.errors import UsageError
from driftcheck.snapshot.printable import printable


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck restore`, its handler and the check of its options."""
    p.description = ("Rebuild the Python environment of a snapshot in a new venv: every distribution at A's version, "
                     "from where A had it (the index, a CUDA wheel index, a local folder, a VCS commit, an archive "
                     "with its hash), with A's Python version; uv installs when present, else pip. Then the new venv "
                     "is snapshotted and checked against A: 'same versions, same binaries' (exit 0), or what could "
                     "not be reproduced and why (exit 1). --format requirements/env/server-command print A as a "
                     "requirements file, its environment variables (no secrets) or its server command line.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP)
    p.add_argument("--venv", metavar="DIR", help="the new venv to build (a directory that does not exist or is empty)")
    p.add_argument("--dry-run", action="store_true", help="print the plan (what from where, which Python) only")
    p.add_argument("--installer", choices=INSTALLERS, default="auto", help="uv when present (default), or force one")
    p.add_argument("--index-url", metavar="URL", help="the index A's releases come from (default: A's configured one)")
    p.add_argument("--extra-index-url", metavar="URL", action="append", default=[], dest="extra_index_urls",
                   help="another index to look in (repeatable)")
    p.add_argument("--find-links", metavar="DIR_OR_URL", action="append", default=[],
                   help="a folder or page of wheels to look in (repeatable)")
    p.add_argument("--no-index", action="store_true", help="look in no index (only --find-links and direct URLs)")
    add_format(p, ("text", "json", *EXPORTS),
               help="text or json: the restore (or --dry-run plan); requirements, env, server-command: an export of "
                    "A printed on stdout, nothing built (default text)")
    p.set_defaults(handler=_cmd_restore, validate=_validate)


def _validate(args: argparse.Namespace) -> None:
    if args.format in EXPORTS:
        if args.venv or args.dry_run:
            raise UsageError(f"--format {args.format} prints an export and builds nothing: drop --venv/--dry-run")
    elif not args.venv and not args.dry_run:
        raise UsageError("restore needs --venv DIR (where to build), or --dry-run")


def _cmd_restore(args: argparse.Namespace) -> int:
    indexes = {"index_url": args.index_url, "extra_index_urls": args.extra_index_urls,
               "find_links": args.find_links, "no_index": args.no_index}
    if args.format in EXPORTS:
        sys.stdout.write(restore_export(args.snapshot, args.format, **indexes))
        return EXIT_OK
    result = restore(args.snapshot, args.venv, dry_run=args.dry_run, installer=args.installer, **indexes)
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(restore_text(result))
    return EXIT_OK if result.dry_run or result.reproduced else EXIT_DIFFERENT


def restore_text(result: Restored) -> str:
    """The plan, the interpreter and installer, and (after a build) the check against A, in words."""
    plan = result.plan
    lines = [f"restore of snapshot {plan.snapshot_id[:12]}: {len(plan.packages)} distributions"
             + (f", Python {plan.python_version}" if plan.python_version else "")]
    if result.python is not None:
        lines.append(f"  Python: {printable(result.python)} ({result.python_version})")
    else:
        lines.append(f"  Python {plan.python_version}: not available here: {result.python_missing}")
    lines.append(f"  installer: {result.installer}")
    lines += [f"  index option: {printable(option)}" for option in plan.indexes.option_lines()]
    lines += [f"  note: {printable(note)}" for note in plan.notes]
    # After a build the check below says what went in; the plan lines only say where each came from.
    verb = "  would install " if result.dry_run else "  "
    for package in plan.packages:
        if package.requirement is None:
            lines.append(f"  cannot plan {printable(package.name)} {package.version or ''}: "
                         f"{printable(package.why or '')}")
        else:
            lines.append(f"{verb}{printable(package.name)} {package.version or ''} from {printable(package.whence)}"
                         + (" (editable)" if package.editable else ""))
    if result.check is None:
        lines.append("dry run: nothing built")
        return "\n".join(lines) + "\n"
    lines.append(f"venv: {printable(result.venv or '')} ({result.seconds} s)")
    for checked in result.check.not_reproduced:
        lines.append(f"  not reproduced: {printable(checked.name)} {checked.version or ''}: "
                     + "; ".join(printable(why) for why in checked.why))
    verdict = "restored: " if result.reproduced else "NOT reproduced: "
    lines.append(verdict + result.check.verdict())
    return "\n".join(lines) + "\n"
