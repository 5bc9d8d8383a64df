"""`driftcheck explain`."""

from __future__ import annotations

import argparse
import json
import sys

from driftcheck.analysis.confirm import bench_runner, confirm, confirm_plan
from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.render import explain_markdown, explain_text
from driftcheck.analysis.references import resolve_snapshot
from driftcheck.analysis.run_causes import compare_references, rank_with_telemetry
from driftcheck.analysis.signers import require_trusted, signers_of
from driftcheck.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    SNAPSHOT_REF_HELP,
    add_format,
    add_require_trusted,
    use_colour,
)
from driftcheck.runs.render import comparison_head_text
from driftcheck.store.snapshots import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck explain` and its handler."""
    p.description = ("Compare snapshot A (before) with B (after) and rank the differences by how likely they are to "
                     "explain a performance shift, each with its evidence and the command that would undo it; list "
                     "the usual suspects found unchanged. Exit 0 when nothing relevant differs, 1 when something "
                     "does, 2 on trouble.")
    p.add_argument("a", help=SNAPSHOT_REF_HELP)
    p.add_argument("b", help=SNAPSHOT_REF_HELP)
    add_format(p, ("text", "markdown", "json"), help="output format (default text; colour only on a terminal)")
    p.add_argument("--all", action="store_true",
                   help="everything: also weigh volatile facts (timestamps, shell variables), and list the "
                        "causes of no known effect one by one instead of folding them into one line")
    p.add_argument("--confirm", action="store_true",
                   help="for the top causes that one process can revert (env vars), rerun the calibrated "
                        "benchmark here with A's value and report whether the number moves back")
    p.add_argument("--non-spec", metavar="RUN|TOK_S",
                   help="with explain run:A run:B of speculative decoding: the run recorded without it (run:ID), "
                        "or its output throughput in tok/s; prints the accept length at which A and B would "
                        "break even with it")
    add_require_trusted(p)
    p.set_defaults(handler=_cmd_explain)


def _cmd_explain(args: argparse.Namespace) -> int:
    # Two runs: their figures go on top, and what the telemetry saw joins the ranked causes. Resolved first,
    # so a --non-spec that cannot be used is refused before any work.
    runs = compare_references(args.a, args.b, args.non_spec)
    store = Store()
    a = resolve_snapshot(args.a, store)
    b = resolve_snapshot(args.b, store)
    signers = signers_of(a, b)
    if args.require_trusted:
        require_trusted(signers)
    result = explain(diff_snapshots(a, b), include_volatile=args.all)
    result.signers = signers
    if runs is not None:
        rank_with_telemetry(result, runs)
    confirmations = None
    if args.confirm:
        plan = confirm_plan(result, a, b)
        sys.stderr.write(plan.text() + "\n")
        run, why_not = bench_runner(plan.suite) if plan.causes else (None, "nothing to revert")
        confirmations = confirm(result, run, why_not)
    if args.format == "json":
        report = result.to_json()
        if confirmations is not None:
            for row in report["explanations"]:
                if row["rank"] in confirmations:
                    row["confirm"] = confirmations[row["rank"]]
        if runs is not None:
            report["runs"] = runs.to_json()
            report["changes"].extend(runs.change_rows())
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
    elif args.format == "markdown":
        if runs is not None:
            sys.stdout.write("```\n" + comparison_head_text(runs) + "```\n\n")
        sys.stdout.write(explain_markdown(result, confirmations))
    else:
        if runs is not None:
            sys.stdout.write(comparison_head_text(runs) + "\n")
        sys.stdout.write(explain_text(result, use_colour(), confirmations, fold=not args.all))
    return EXIT_DIFFERENT if result.explanations else EXIT_OK
