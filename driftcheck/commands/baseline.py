"""`driftcheck baseline`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck import api
from driftcheck.analysis.render import snapshot_text
from driftcheck.api.baseline import DEFAULT_BASELINE_RUNS
from driftcheck.baselines.render import between_sessions_text, results_text
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
    positive_float,
    positive_int,
    progress_printer,
    run_progress,
)
from driftcheck.errors import UsageError
from driftcheck.snapshot.printable import printable
from driftcheck.snapshot.trust import TrustStore


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
    save.add_argument("--sessions", type=positive_int, default=1, metavar="N",
                      help="take --bench in N sessions in all, --interval apart (default %(default)s): their spread "
                           "is how far this host's speed moves between sessions, which every later check counts")
    save.add_argument("--interval", type=positive_float, default=120.0, metavar="S",
                      help="seconds between two sessions of --sessions (default %(default)g)")
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
    if args.sessions > 1 and not args.bench:
        raise UsageError("--sessions takes --bench in several sessions; give --bench SUITE too")


def _cmd_save(args: argparse.Namespace) -> int:
    asked_bench = bool(args.bench) and not args.snapshot
    with flag_terms():
        saved = api.save_baseline(args.name, args.snapshot, force=args.force, label=args.label, python=args.python,
                                  bench=args.bench or None, runs=args.runs or 1, budget_s=args.budget_s,
                                  sessions=args.sessions, interval_s=args.interval,
                                  require_trusted=args.require_trusted,
                                  progress=progress_printer(sys.stderr.isatty()) if asked_bench else None,
                                  step_progress=run_progress() if asked_bench else None)
    sys.stdout.write("".join(line + "\n" for line in saved.signers.lines()))
    print(f"baseline {printable(saved.entry.name)} -> {saved.entry.snapshot_id[:12]} ({printable(saved.entry.host)})")
    if saved.bench:
        sys.stdout.write(results_text(saved.bench))
    if saved.sessions > 1:
        sys.stdout.write(between_sessions_text(saved.between_sessions, saved.sessions))
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    listed = api.list_baselines()
    if args.format == "json":
        print(json.dumps(listed.to_json(), indent=2, sort_keys=True))
    elif not listed.entries:
        print("no baselines yet; `driftcheck baseline save NAME [SNAP]`")
    else:
        for e in listed.entries:
            print(f"{printable(e.name)}  {e.snapshot_id[:12]}  {e.saved_at[:19].replace('T', ' ')}  "
                  f"{printable(e.host)}" + (f"  '{printable(e.label)}'" if e.label else ""))
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    shown = api.show_baseline(args.name)
    if args.format == "json":
        print(json.dumps(shown.to_json(), indent=2, sort_keys=True))
    else:
        print(f"baseline {shown.entry.name} (saved {shown.entry.saved_at})")
        sys.stdout.write(snapshot_text(shown.snapshot, TrustStore().signer_of(shown.snapshot.document).who()))
    return EXIT_OK


def _cmd_rm(args: argparse.Namespace) -> int:
    removed = api.remove_baseline(args.name)
    print(f"baseline {removed.name} removed (snapshot {removed.snapshot_id[:12]} stays in the store)")
    return EXIT_OK
