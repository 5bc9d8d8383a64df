"""`driftcheck check`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from driftcheck import api
from driftcheck.analysis.explain.render import explain_markdown, explain_text
from driftcheck.api.check import DEFAULT_MIN_CONFIDENCE
from driftcheck.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    SNAPSHOT_REF_HELP,
    add_format,
    add_host,
    add_no_store,
    add_probe_selection,
    add_python,
    add_require_trusted,
    add_runs,
    add_server_argument,
    flag_terms,
    fraction,
    positive_int,
    progress_printer,
    remote_host,
    run_progress,
    use_colour,
    validate_host,
)
from driftcheck.errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck check`, its handler and the check of its options."""
    p.description = ("Take a fresh snapshot (cheap probes unless --probe), compare it with the reference (default: "
                     "baseline `default`, else the previous snapshot), print the explanation and any policy "
                     "violation. Exit 0 no relevant drift, 1 drift or a policy violation, 2 trouble. When the "
                     "reference carries benchmark results (baseline save --bench), the same suite reruns and each "
                     "benchmark gets a verdict: slower/faster beyond its minimum detectable shift is drift, "
                     "unchanged and inconclusive are not.")
    p.add_argument("--against", metavar="NAME|SNAP", help=f"a baseline name or {SNAPSHOT_REF_HELP}")
    p.add_argument("--policy", type=Path, metavar="FILE", help="YAML policy: ignore, tolerances, must")
    add_probe_selection(p, "take this probe; default: the cheap ones", skip=False)
    add_python(p)
    add_host(p)
    add_format(p, ("text", "markdown", "json"))
    p.add_argument("--min-confidence", type=fraction, default=DEFAULT_MIN_CONFIDENCE, metavar="C",
                   help=f"causes below this confidence are shown but are not drift (default {DEFAULT_MIN_CONFIDENCE})")
    add_no_store(p, "do not keep the fresh snapshot in the store")
    reruns = p.add_mutually_exclusive_group()
    reruns.add_argument("--no-bench", action="store_true",
                        help="do not rerun the reference's benchmarks (by default, a reference with benchmark "
                             "results has them rerun: same suite, runs and budget)")
    add_runs(reruns, help="independent benchmark runs instead of the reference's number")
    p.add_argument("--max-runs", type=positive_int, metavar="N",
                   help="benchmarks the first runs leave undecided get more runs, up to N in all (default: twice "
                        "the runs; equal to them: never more). Each of the two looks is judged at 0.5%%, so "
                        "looking twice keeps the 1%% false-alarm level")
    add_require_trusted(p, "the reference")
    add_server_argument(p, against_reference=True)
    p.add_argument("--process", action="append", default=[], metavar="PATTERN",
                   help="also check running processes whose command line matches this regex (their environment, "
                        "affinity, mapped libraries) against the reference's; repeatable")
    p.set_defaults(handler=_cmd_check, validate=_validate)


def _validate(args: argparse.Namespace) -> None:
    validate_host(args)
    if args.no_bench and args.max_runs is not None:
        raise UsageError("--max-runs: not allowed with --no-bench (nothing is rerun)")


def _cmd_check(args: argparse.Namespace) -> int:
    with flag_terms(), remote_host(args) as host:
        result = api.check(against=args.against, policy=args.policy, probes=args.probe or (),
                           python=None if host else args.python, min_confidence=args.min_confidence,
                           keep=not args.no_store, rerun_bench=False if args.no_bench else None,
                           bench_runs=args.runs, bench_max_runs=args.max_runs, require_trusted=args.require_trusted,
                           server=args.server, server_log=args.server_log, processes=tuple(args.process),
                           host=host,
                           progress=progress_printer(sys.stderr.isatty()), step_progress=run_progress())
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        render = explain_markdown(result.explained) if args.format == "markdown" else \
            explain_text(result.explained, use_colour())
        sys.stdout.write(render)
        if result.violations:
            sys.stdout.write("\nPolicy violations:\n" + "".join(f"  ! {v}\n" for v in result.violations))
        if result.bench_shifts:
            sys.stdout.write("\nBenchmarks beyond their minimum detectable shift:\n"
                             + "".join(f"  ! {line}\n" for line in result.shift_lines))
        sys.stdout.write(f"\ncheck: {'DRIFT' if result.drift else 'ok'} against {result.reference.short_id}\n")
    return EXIT_DIFFERENT if result.drift else EXIT_OK
