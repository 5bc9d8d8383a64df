"""`driftcheck diff`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.render import diff_text
from driftcheck.analysis.signers import require_trusted, signers_of
from driftcheck.api.references import resolve_snapshot
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, SNAPSHOT_REF_HELP, add_format, add_require_trusted
from driftcheck.store.snapshots import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck diff` and its handler."""
    p.description = ("Compare snapshot A (before) with B (after), the categories of the likeliest causes first. A "
                     "or B may be a pasted report (collect_env, check_env, nvidia-smi), imported on the fly; then "
                     "only the facts both sides hold are compared. Exit 0 when nothing relevant differs, 1 when "
                     "something does, 2 when a snapshot cannot be read.")
    p.add_argument("a", help=SNAPSHOT_REF_HELP)
    p.add_argument("b", help=SNAPSHOT_REF_HELP)
    add_format(p)
    p.add_argument("--all", action="store_true",
                   help="also show readings (values that move on their own: clocks, free memory, the taking)")
    add_require_trusted(p)
    p.set_defaults(handler=_cmd_diff)


def _cmd_diff(args: argparse.Namespace) -> int:
    store = Store()
    a = resolve_snapshot(args.a, store)
    b = resolve_snapshot(args.b, store)
    signers = signers_of(a, b)
    if args.require_trusted:
        require_trusted(signers)
    diff = diff_snapshots(a, b)
    explained = explain(diff, include_volatile=args.all)
    explained.signers = signers
    if args.format == "json":
        report = explained.to_json()
        if diff.not_in_report:
            report["not_in_report"] = diff.not_in_report
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        # A reading a plain diff hides (a clock under load, the boot id) is shown when a cause rests on it.
        evidence = explained.evidence_paths()
        sys.stdout.write("".join(line + "\n" for line in signers.lines()))
        sys.stdout.write(diff_text(diff, args.all, also=[c for c in diff.readings if c.path in evidence],
                                   ranked=[e.category for e in explained.explanations]))
    return EXIT_DIFFERENT if diff.changes or explained.explanations else EXIT_OK
