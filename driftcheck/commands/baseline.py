"""`driftcheck baseline`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck import api
from driftcheck.analysis.render import snapshot_text
from driftcheck.analysis.signers import require_trusted, signers_for
from driftcheck.api.references import resolve_snapshot
from driftcheck.baselines.render import results_text
from driftcheck.commands.common import (
    EXIT_OK,
    SNAPSHOT_REF_HELP,
    Parser,
    add_bench_suite,
    add_budget,
    add_format,
    add_label,
    add_python,
    add_require_trusted,
    add_runs,
    flag_terms,
    progress_printer,
    run_progress,
)
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.trust import TrustStore
from driftcheck.store.named import NamedSnapshots
from driftcheck.store.snapshots import Store

# Three runs are the fewest whose spread means something; each more narrows the MDS further.
DEFAULT_BASELINE_RUNS = 3


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck baseline save|list|show|rm`, one handler per action."""
    p.description = ("Named baselines: a name pointing at a stored snapshot, usable anywhere a snapshot is as "
                     "baseline:NAME. `driftcheck check` compares with `default`.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    save = actions.add_parser("save", help="name a snapshot (default: take one now)")
    save.add_argument("name", help="the baseline's name (letters, digits, . _ -)")
    save.add_argument("snapshot", nargs="?", help=f"{SNAPSHOT_REF_HELP}; default: a fresh snapshot of all probes")
    save.add_argument("--force", action="store_true", help="re-point an existing name")
    add_label(save, "label of the fresh snapshot (when SNAP is not given)")
    add_python(save, "the interpreter whose packages matter (fresh snapshot)")
    add_bench_suite(save, "also run this benchmark suite into the fresh snapshot, so that `check --against NAME` "
                          "reruns it and gives each benchmark a verdict; needs torch")
    add_runs(save, DEFAULT_BASELINE_RUNS, "independent runs of --bench, each in its own process (default "
                                          "%(default)s): their spread is what tells a change from this machine's "
                                          "run-to-run noise")
    add_budget(save)
    add_require_trusted(save, "SNAP")
    save.set_defaults(handler=_cmd_save, validate=_validate_save)
    lst = actions.add_parser("list", help="list baselines")
    add_format(lst)
    lst.set_defaults(handler=_cmd_list)
    show = actions.add_parser("show", help="print a baseline's snapshot")
    show.add_argument("name")
    add_format(show)
    show.set_defaults(handler=_cmd_show)
    rm = actions.add_parser("rm", help="forget a baseline (its snapshot stays in the store)")
    rm.add_argument("name")
    rm.set_defaults(handler=_cmd_rm)


def _validate_save(args: argparse.Namespace) -> None:
    if args.snapshot and args.bench:
        raise UsageError("--bench measures now, into a fresh snapshot; it cannot be added to SNAP")


def _fresh(args: argparse.Namespace) -> Snapshot:
    """The fresh snapshot `baseline save` names when no SNAP is given (kept by the caller, with its name)."""
    with flag_terms():
        bench = api.BenchRequest(args.bench, args.runs or 1, args.budget_s) if args.bench else None
        request = api.SnapshotRequest(label=args.label or f"baseline {args.name}", python=args.python,
                                      bench=bench, keep=False)
        return api.take_snapshot(request, progress=progress_printer(sys.stderr.isatty()) if args.bench else None,
                                 step_progress=run_progress() if args.bench else None)


def _cmd_save(args: argparse.Namespace) -> int:
    store = Store()
    named = NamedSnapshots(store)
    if not args.snapshot and not args.force:
        named.check_free(args.name)
    snapshot = resolve_snapshot(args.snapshot, store) if args.snapshot else _fresh(args)
    signers = signers_for({"snapshot": snapshot}, roles={"snapshot": "SNAP"})
    if args.require_trusted:
        require_trusted(signers)
    sys.stdout.write("".join(line + "\n" for line in signers.lines()))
    bench_data = snapshot.probe_data("bench")
    if args.bench and not bench_data:
        # A baseline saved without the benchmarks it was asked for would make `check` skip them silently.
        outcome = snapshot.document["probes"].get("bench") or {}
        raise DriftcheckError(f"baseline {args.name} not saved: the benchmarks did not run "
                              f"({outcome.get('status')}: {outcome.get('error')})")
    saved = named.save(args.name, snapshot, args.force)
    print(f"baseline {saved.name} -> {saved.snapshot_id[:12]} ({saved.host})")
    if bench_data:
        sys.stdout.write(results_text(bench_data))
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    entries = NamedSnapshots(Store()).entries()
    if args.format == "json":
        print(json.dumps([e.to_json() for e in entries], indent=2, sort_keys=True))
    elif not entries:
        print("no baselines yet; `driftcheck baseline save NAME [SNAP]`")
    else:
        for e in entries:
            print(f"{e.name}  {e.snapshot_id[:12]}  {e.saved_at[:19].replace('T', ' ')}  {e.host}"
                  + (f"  {e.label!r}" if e.label else ""))
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    named = NamedSnapshots(Store())
    entry = named.get(args.name)
    snapshot = named.snapshot(args.name)
    if args.format == "json":
        print(json.dumps({**entry.to_json(), "snapshot": snapshot.document}, indent=2, sort_keys=True))
    else:
        print(f"baseline {entry.name} (saved {entry.saved_at})")
        sys.stdout.write(snapshot_text(snapshot, TrustStore().signer_of(snapshot.document).who()))
    return EXIT_OK


def _cmd_rm(args: argparse.Namespace) -> int:
    removed = NamedSnapshots(Store()).remove(args.name)
    print(f"baseline {removed.name} removed (snapshot {removed.snapshot_id[:12]} stays in the store)")
    return EXIT_OK
