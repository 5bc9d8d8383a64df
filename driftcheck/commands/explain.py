"""`driftcheck explain`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TYPE_CHECKING

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
    add_quiet,
    add_require_trusted,
    flag_terms,
    positive_float,
    positive_int,
    use_colour,
)
from driftcheck.errors import UsageError
from driftcheck.runs.render import comparison_head_text
from driftcheck.stats.comparison import DEFAULT_MAX_PAIRS
from driftcheck.store.snapshots import Store

if TYPE_CHECKING:
    from driftcheck.analysis.confirm import Confirmation, ConfirmSetup
    from driftcheck.analysis.explain.model import Explained
    from driftcheck.snapshot.model import Snapshot


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
    p.add_argument("--non-spec", metavar="RUN|TOK_S",
                   help="with explain run:A run:B of speculative decoding: the run recorded without it (run:ID), "
                        "or its output throughput in tok/s; prints the accept length at which A and B would "
                        "break even with it")
    add_require_trusted(p)
    _add_confirm_arguments(p)
    p.set_defaults(handler=_cmd_explain, validate=_validate)


def _add_confirm_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "--confirm", "undo each top cause here and measure it with your own command, in interleaved rounds as "
                     "`driftcheck try` runs them: an environment variable gets A's value; a package gets A's "
                     "version in a scratch environment (B's interpreter with A's files of that one distribution "
                     "first on PYTHONPATH: copied from --a-python, else installed from the index with pip for "
                     "B's interpreter and cached; neither environment is touched); a server argument gets A's "
                     "value in B's --server-cmd; transparent huge pages, with --allow-system-changes, A's mode for "
                     "each run, put back after. Anything else (a driver, hardware, another root-only setting) is "
                     "said to be not confirmable here, and why. Each cause gets `confirmed` (how much "
                     "of the shift undoing it recovers, with pairs and p), `refuted` or `inconclusive` (with the "
                     "resolution reached). What will be built and run, and about how long, is said first.")
    group.add_argument("--confirm", action="store_true",
                       help="confirm the top causes by experiment; needs the benchmark command after --")
    group.add_argument("--allow-system-changes", action="store_true",
                       help="also undo a machine-wide root-only setting that driftcheck knows how to put back "
                            "(transparent huge pages): set for each run, restored after it, and at the end, also "
                            "on Ctrl-C or SIGTERM")
    group.add_argument("--top", type=positive_int, default=3, metavar="N",
                       help="how many of the ranked causes to confirm (default 3)")
    group.add_argument("--a-python", metavar="PATH",
                       help="A's interpreter, where A's environment is on this machine: A's package files are "
                            "copied from it, and A runs too so the share of the shift is measured")
    group.add_argument("--b-python", metavar="PATH",
                       help="B's interpreter, in place of CMD's leading python word (default: CMD's own)")
    group.add_argument("--server-cmd", metavar="CMDLINE",
                       help="B's server, started before each run and stopped after; needs --ready")
    group.add_argument("--ready", metavar="URL", help="the server is up once URL answers (any HTTP status)")
    group.add_argument("--ready-timeout", type=positive_float, default=120.0, metavar="S",
                       help="give up on a server not answering after S seconds (default 120)")
    group.add_argument("--metric", action="append", default=[], metavar="NAME[UNIT]=REGEX",
                       help="read this figure of CMD's output as `driftcheck run --metric` does")
    group.add_argument("--figure", metavar="NAME", help="compare this figure of those CMD prints")
    group.add_argument("--wall", action="store_true", help="compare the wall time of each run")
    group.add_argument("--max-pairs", type=positive_int, default=DEFAULT_MAX_PAIRS, metavar="N",
                       help=f"at most N rounds per cause (default {DEFAULT_MAX_PAIRS})")
    group.add_argument("--budget-s", "--budget", dest="budget_s", type=positive_float, metavar="S",
                       help="per cause: stop before a round that would end past S seconds")
    group.add_argument("--seed", type=int, help="the seed of the run order (default: drawn, and reported)")
    group.add_argument("--run-timeout", type=positive_float, metavar="S", help="give up on a run still going after S s")
    group.add_argument("--no-record", action="store_true", help="keep no run records of the trials")
    add_quiet(group, "no progress of the trials on stderr")
    p.add_argument("command", nargs=argparse.REMAINDER, action=_OptionsThenCommand, default=[],
                   metavar="-- CMD ARGS", help="with --confirm: your benchmark command")


class _OptionsThenCommand(argparse.Action):
    """The words after A and B: options up to `--`, the command after it.

    argparse gives a REMAINDER positional everything after the positionals before it, options included
    (`explain A B --format json`); those are parsed again here, as options, and only what follows `--` is
    the command. argparse drops a `--` that comes right after B, so words that do not start with an option
    are the command."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        words = [str(w) for w in values] if isinstance(values, list) else []
        cut = words.index("--") if "--" in words else len(words) if words and words[0].startswith("-") else -1
        options, command = words[:cut], words[cut + 1:]
        if options:
            parser.parse_args([*options, namespace.a, namespace.b], namespace)
        namespace.command = command


def _command(args: argparse.Namespace) -> list[str]:
    return list(args.command)


def _validate(args: argparse.Namespace) -> None:
    command = _command(args)
    if args.confirm and not command:
        raise UsageError("--confirm needs your benchmark command after --, e.g. driftcheck explain A B --confirm "
                         "-- python bench.py")
    if command and not args.confirm:
        raise UsageError(f"{shlex.join(command)}: a command is only run with --confirm")
    if bool(args.server_cmd) != bool(args.ready):
        raise UsageError("--server-cmd and --ready go together: the server, and the URL that answers once it is up")
    if args.wall and (args.metric or args.figure):
        raise UsageError("--wall compares wall time; leave out --metric/--figure")
    if args.max_pairs < 2:
        raise UsageError(f"--max-pairs {args.max_pairs}: a trial needs at least 2 rounds")


def _setup(args: argparse.Namespace) -> ConfirmSetup:
    from driftcheck.analysis.confirm import ConfirmSetup
    from driftcheck.runs.metrics import pattern_name, user_pattern
    from driftcheck.runs.trial import WALL, ServerSpec, TrialPlan

    patterns = tuple(user_pattern(spec) for spec in args.metric)
    metric = WALL if args.wall else args.figure or (patterns and pattern_name(args.metric[0])) or None
    server = (ServerSpec(tuple(shlex.split(args.server_cmd)), args.ready, args.ready_timeout)
              if args.server_cmd else None)
    trial = TrialPlan(command=tuple(_command(args)), variants=(), patterns=patterns, metric=metric,
                      max_pairs=args.max_pairs, budget_s=args.budget_s, seed=args.seed, server=server,
                      run_timeout_s=args.run_timeout, label="confirm", record=not args.no_record)
    return ConfirmSetup(trial, args.a_python, args.b_python, args.allow_system_changes)


def _note(text: str) -> None:
    sys.stderr.write(f"driftcheck: {text}\n")
    sys.stderr.flush()


def _confirm(args: argparse.Namespace, result: Explained, b: Snapshot) -> dict[int, Confirmation]:
    from driftcheck.analysis.confirm import confirm_plan, run_confirm
    from driftcheck.runs.store import RunStore

    with flag_terms():
        plan = confirm_plan(result, b, _setup(args), top=args.top)
        sys.stderr.write("\n".join(plan.text()) + "\n")
        sys.stderr.flush()

        def estimate(one_run_s: float) -> None:
            sys.stderr.write(plan.estimate(one_run_s) + "\n")
            sys.stderr.flush()

        return run_confirm(plan, note=None if args.quiet else _note,
                           store=None if args.no_record else RunStore(), timed=estimate)


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
    confirmed = _confirm(args, result, b) if args.confirm else None
    confirmations = None if confirmed is None else {rank: c.text for rank, c in confirmed.items()}
    if args.format == "json":
        report = result.to_json()
        if confirmed is not None:
            for row in report["explanations"]:
                if row["rank"] in confirmed:
                    row["confirm"] = confirmed[row["rank"]].to_json()
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
