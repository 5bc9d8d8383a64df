"""`driftcheck explain`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from driftcheck import api
from driftcheck.analysis.explain.render import explain_markdown, explain_text
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
from driftcheck.stats import DEFAULT_MAX_PAIRS


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
    group.add_argument("--ready-timeout", type=positive_float, default=api.DEFAULT_READY_TIMEOUT_S, metavar="S",
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
    with flag_terms():
        api.check_trial_options(bool(args.server_cmd), bool(args.ready), args.wall,
                                bool(args.metric or args.figure), args.max_pairs)


def _confirm_request(args: argparse.Namespace) -> api.ConfirmRequest | None:
    """What --confirm asks for, in the face's terms; None without --confirm."""
    if not args.confirm:
        return None
    return api.ConfirmRequest(command=_command(args), top=args.top, a_python=args.a_python, b_python=args.b_python,
                              server_command=shlex.split(args.server_cmd) if args.server_cmd else None,
                              ready=args.ready, ready_timeout_s=args.ready_timeout, metrics=args.metric,
                              figure=args.figure, wall=args.wall, max_pairs=args.max_pairs, budget_s=args.budget_s,
                              seed=args.seed, run_timeout_s=args.run_timeout, record=not args.no_record,
                              allow_system_changes=args.allow_system_changes)


def _tell(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _note(text: str) -> None:
    _tell(f"driftcheck: {text}")


def _cmd_explain(args: argparse.Namespace) -> int:
    with flag_terms():
        result = api.explain(args.a, args.b, all=args.all, require_trusted=args.require_trusted,
                             non_spec=args.non_spec, confirm=_confirm_request(args), tell=_tell,
                             note=None if args.quiet else _note)
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=False))
    elif args.format == "markdown":
        if result.runs is not None:
            sys.stdout.write("```\n" + _runs_head(result) + "```\n\n")
        sys.stdout.write(explain_markdown(result, result.confirmation_texts()))
    else:
        if result.runs is not None:
            sys.stdout.write(_runs_head(result) + "\n")
        sys.stdout.write(explain_text(result, use_colour(), result.confirmation_texts(), fold=not args.all))
    return EXIT_DIFFERENT if result.explanations else EXIT_OK


def _runs_head(result: api.ExplainResult) -> str:
    """The head of two runs' comparison. Its renderer is imported here, where two runs were compared: it
    brings the run store, which an explain of two snapshots (the common case) never reads."""
    from driftcheck.runs.render import comparison_head_text

    return comparison_head_text(result.runs) if result.runs is not None else ""
