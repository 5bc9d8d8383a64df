"""`driftcheck try`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from driftcheck.api.trial import Variant, trial, variant
from driftcheck.commands.common import add_format, add_label, add_quiet, flag_terms, positive_float, positive_int
from driftcheck.errors import UsageError
from driftcheck.runs.render import trial_text
from driftcheck.stats import DEFAULT_MAX_PAIRS

_NAMES = ("a", "b", "c", "d")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck try`, its handler and the check of its options."""
    p.usage = "%(prog)s [--a CHANGES] [--b CHANGES] [options] -- CMD [ARGS...]"
    p.description = (
        "Run CMD under two (or more) variants in randomized interleaved rounds (each round every variant once, "
        "in a seeded random order, each run a fresh process) and say whether B differs from A: a paired "
        "Wilcoxon signed-rank test on the per-round log ratios, looked at on a fixed schedule with levels "
        "calibrated on the test's exact joint null across the looks, so stopping early keeps the stated "
        "false-positive rate. The effect is "
        "the Hodges-Lehmann estimate with its repeated confidence interval; where nothing is resolved, the "
        "effect that would have been seen is printed. The figure is the first one CMD printed (the patterns of "
        "`driftcheck run`), your --metric, or --wall. Every run is kept as a run record (`driftcheck runs`), "
        "without snapshots. Exit 0: no difference resolved, 1: a difference, 2: trouble.")
    p.epilog = ("examples: driftcheck try --a NCCL_ALGO=Tree --b NCCL_ALGO=Ring -- ./all_reduce_perf -b 1G -e 1G\n"
                "  driftcheck try --b OMP_NUM_THREADS=1 --wall -- python bench.py\n"
                "  driftcheck try --a-python /old/bin/python --b-python /new/bin/python -- python bench.py\n"
                "  driftcheck try --server-cmd 'python -m sglang.launch_server ...' --ready http://127.0.0.1:30000/"
                "health --b SGLANG_X=1 -- python -m sglang.bench_serving ...")
    for name in _NAMES:
        upper = name.upper()
        p.add_argument(f"--{name}", action="append", default=[], metavar="CHANGES",
                       help=f"variant {upper}'s environment: NAME=VALUE sets, -NAME unsets (write --{name}=-NAME); "
                            "several per option or repeated" + ("" if name in "ab" else f" (gives a variant {upper})"))
        p.add_argument(f"--{name}-python", metavar="PATH",
                       help=f"variant {upper}'s interpreter, in place of CMD's leading python/python3 word")
        p.add_argument(f"--{name}-cmd", metavar="CMDLINE", help=f"variant {upper}'s whole command line instead of CMD")
        p.add_argument(f"--{name}-server-cmd", metavar="CMDLINE",
                       help=f"variant {upper}'s own server command instead of --server-cmd (e.g. with another flag)")
    p.add_argument("--metric", action="append", default=[], metavar="NAME[UNIT]=REGEX",
                   help="read this figure as `driftcheck run --metric` does; the first one given is compared")
    p.add_argument("--figure", metavar="NAME", help="compare this figure of those CMD prints (e.g. output_token_"
                                                    "throughput); default: the first rate printed, else the first")
    p.add_argument("--wall", action="store_true", help="compare the wall time of each run instead of a printed figure")
    p.add_argument("--max-pairs", type=positive_int, default=DEFAULT_MAX_PAIRS, metavar="N",
                   help=f"at most N rounds (default {DEFAULT_MAX_PAIRS}; a trial that finds no difference runs all)")
    p.add_argument("--budget-s", "--budget", dest="budget_s", type=positive_float, metavar="S",
                   help="stop before a round that would end past S seconds (the last look spends what alpha is left)")
    p.add_argument("--alpha", type=float, default=0.05, help="the overall false-positive rate (default 0.05)")
    p.add_argument("--seed", type=int, help="the seed of the run order (default: drawn, and reported)")
    p.add_argument("--server-cmd", metavar="CMDLINE",
                   help="start this server before each run, with that variant's environment, and stop it (its "
                        "whole process tree) after; needs --ready")
    p.add_argument("--ready", metavar="URL", help="the server is up once URL answers (any HTTP status)")
    p.add_argument("--ready-timeout", type=positive_float, default=120.0, metavar="S",
                   help="give up on a server whose --ready URL has not answered after S seconds (default 120)")
    p.add_argument("--run-timeout", type=positive_float, metavar="S", help="give up on a run still going after S s")
    p.add_argument("--no-record", action="store_true", help="keep no run records")
    add_label(p, "a name kept on the trial's run records (try:LABEL:A ...)")
    add_format(p)
    add_quiet(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="the command to run")
    p.set_defaults(handler=_cmd_try, validate=validate)


def command(args: argparse.Namespace) -> list[str]:
    """CMD and its arguments, without the `--` that separates them from ours."""
    argv = list(args.command)
    return argv[1:] if argv and argv[0] == "--" else argv


def validate(args: argparse.Namespace) -> None:
    """Refuse, before any run, options that cannot go together."""
    own_commands = all(getattr(args, f"{n}_cmd") for n in "ab")
    if not command(args) and not own_commands:
        raise UsageError("give the command to run after --, e.g. driftcheck try --b OMP_NUM_THREADS=1 -- python "
                         "bench.py (or --a-cmd and --b-cmd)")
    if not 0 < args.alpha < 0.5:
        raise UsageError(f"--alpha {args.alpha:g}: give a false-positive rate between 0 and 0.5")
    servers = [args.server_cmd or getattr(args, f"{n}_server_cmd") for n in _NAMES if _variant_given(args, n)]
    if any(servers) != bool(args.ready):
        raise UsageError("--server-cmd and --ready go together: the server, and the URL that answers once it is up")
    if any(servers) and not all(servers):
        raise UsageError("give --server-cmd (or a --X-server-cmd for every variant): each run needs its server")
    if args.wall and (args.metric or args.figure):
        raise UsageError("--wall compares wall time; leave out --metric/--figure")
    if args.max_pairs < 2:
        raise UsageError(f"--max-pairs {args.max_pairs}: a trial needs at least 2 rounds")


def _variant_given(args: argparse.Namespace, name: str) -> bool:
    """A and B always run; C and D where one of their options is given."""
    return name in "ab" or any(getattr(args, f"{name}{suffix}") for suffix in ("", "_python", "_cmd", "_server_cmd"))


def _words(cmdline: str | None) -> tuple[str, ...] | None:
    return tuple(shlex.split(cmdline)) if cmdline else None


def _variants(args: argparse.Namespace) -> list[Variant]:
    """A and B, and C and D where given, as the face builds them."""
    return [variant(name.upper(), getattr(args, name), python=getattr(args, f"{name}_python"),
                    command=_words(getattr(args, f"{name}_cmd")),
                    server_command=_words(getattr(args, f"{name}_server_cmd")))
            for name in _NAMES if _variant_given(args, name)]


def trial_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of the face's `trial` (and `bisect`) that the options of `try` give."""
    return {"variants": _variants(args), "metrics": tuple(args.metric), "figure": args.figure, "wall": args.wall,
            "max_pairs": args.max_pairs, "budget_s": args.budget_s, "alpha": args.alpha, "seed": args.seed,
            "server_command": _words(args.server_cmd), "ready_url": args.ready,
            "ready_timeout_s": args.ready_timeout, "run_timeout_s": args.run_timeout, "label": args.label,
            "record": not args.no_record}


def note(text: str) -> None:
    """Progress of a trial, on stderr as it comes."""
    sys.stderr.write(f"driftcheck: {text}\n")
    sys.stderr.flush()


def _cmd_try(args: argparse.Namespace) -> int:
    with flag_terms(a_python="--a-python", b_python="--b-python", c_python="--c-python", d_python="--d-python"):
        result = trial(command(args), **trial_options(args), note=None if args.quiet else note)
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(trial_text(result))
    return 1 if result.differs else 0
