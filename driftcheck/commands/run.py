"""`driftcheck run`."""

from __future__ import annotations

import argparse
import gc
import io
import os
import sys

from driftcheck.api.run import run
from driftcheck.commands.common import (
    add_label,
    add_probe_selection,
    add_process_arguments,
    add_python,
    add_quiet,
    add_server_argument,
    flag_terms,
)
from driftcheck.errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck run`, its handler and the check of its options."""
    p.usage = "%(prog)s [options] -- CMD [ARGS...]"
    p.description = ("Take a cheap snapshot, run CMD with its output passed through unchanged, watch the GPUs "
                     "(clocks, power, temperature, throttle reasons, processes) and the CPUs once a second while it "
                     "runs, take a second reading after it, and store a run record: the figures CMD printed "
                     "(SGLang/vLLM benchmarks, nccl-tests, 'N tok/s' and 'N ms' lines, your --metric regexes), the "
                     "telemetry summary and both snapshots. Exits with CMD's exit code; Ctrl-C reaches CMD and the "
                     "record says so. With --server URL both snapshots also hold what that engine reports about its "
                     "settings, and its process (the one listening on URL's port) counts as the run's own on the "
                     "GPUs, not as sharing (--pid/--process name a server elsewhere). `driftcheck runs` lists runs; "
                     "`run:ID` stands for a snapshot.")
    p.epilog = "example: driftcheck run --label nightly -- python -m sglang.bench_serving --backend sglang"
    add_label(p, "a name for the run (kept in the record and on its snapshots)")
    p.add_argument("--metric", action="append", default=[], metavar="NAME[UNIT]=REGEX",
                   help="also read this figure: the regex's group named 'value' (else its first group) is "
                        "the number; the unit is [UNIT] or a group named 'unit' (a unit ending in /s is "
                        "better higher, ms/s/us better lower); repeatable")
    add_probe_selection(p, "snapshot only this probe; default: the cheap ones", skip=False)
    add_python(p, "the interpreter whose packages matter; default: CMD's own when CMD is a Python, else "
                  "driftcheck's")
    add_process_arguments(p)
    add_server_argument(p)
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds between telemetry samples (default 1)")
    p.add_argument("--no-sign", action="store_true", help="do not sign the two snapshots")
    add_quiet(p, "print nothing of our own, only CMD's output")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="the command to run")
    p.set_defaults(handler=_cmd_run, validate=_validate, deep=False)


def _command(args: argparse.Namespace) -> list[str]:
    """CMD and its arguments, without the `--` that separates them from ours."""
    argv = list(args.command)
    return argv[1:] if argv and argv[0] == "--" else argv


def _validate(args: argparse.Namespace) -> None:
    if not _command(args):
        raise UsageError("give the command to run after --, e.g. driftcheck run -- python bench.py")
    if not 0.1 <= args.interval <= 60:
        raise UsageError(f"--interval {args.interval:g}: give between 0.1 and 60 seconds")


def _note(text: str) -> None:
    sys.stderr.write(f"driftcheck: {text}\n")


def _require_open_stdout() -> None:
    """Refuse, before the "before" snapshot is taken, a run whose standard output is closed: the command's
    output would have nowhere to go and the run would end half-recorded."""
    closed = sys.stdout is None  # Python started with fd 1 closed
    if not closed:
        try:
            descriptor = sys.stdout.fileno()
        except (io.UnsupportedOperation, AttributeError, ValueError):
            return  # not a file descriptor (a harness's buffer): nothing to check
        try:
            os.fstat(descriptor)
        except OSError:
            closed = True
    if closed:
        raise UsageError("standard output is closed: the command's output would be lost; run it with a stdout "
                         "(e.g. > run.log)")


def _cmd_run(args: argparse.Namespace) -> int:
    _require_open_stdout()
    show = not args.quiet and sys.stderr.isatty()
    with flag_terms():  # refused before anything runs: a --python that is no interpreter, a bad --pid or --server
        outcome = run(_command(args), label=args.label, metrics=args.metric, probes=args.probe, python=args.python,
                      pids=args.pid, processes=args.process, server=args.server, server_log=args.server_log,
                      interval_s=args.interval,
                      sign=not args.no_sign, note=_note if show else None)
    if not args.quiet:
        # Imported here: its modules are loaded beside the snapshot before, not while the command line is read.
        from driftcheck.runs.render import run_summary_text

        sys.stderr.write(run_summary_text(outcome))
    # The run is stored, and from the console script this process ends next: what it holds needs no more cyclic
    # collection. Frozen, it is freed as the interpreter's exit clears the modules, without the collections of
    # that teardown, which took 25-77 ms after a `run -- true` on a loaded 2-core VM (7-11 ms frozen). An
    # in-process caller (a test) only keeps these objects out of its later collections.
    gc.freeze()
    return outcome.record.exit_code
