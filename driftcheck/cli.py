"""The `driftcheck` command line. Thin: it parses, calls the library, prints, and maps errors to exit codes.

Exit codes follow diff(1): 0 nothing relevant differs (or all is well), 1 differences (or a failed
verification), 2 trouble (bad input, unreadable snapshot, missing library or host).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from driftcheck import __version__
from driftcheck.baselines.render import results_text
from driftcheck.baselines.serving import ServingPlan, measure_server, measure_sglang_engine
from driftcheck.baselines.snapshot import bench_options, is_opt_in, take_snapshot_then_bench
from driftcheck.baselines.suites import DEVICES, SUITES, run_suite
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.host import Host, LocalHost
from driftcheck.keys import load_redaction_secret, load_signing_key
from driftcheck.probes import builtin_probes, probe_names, select_probes
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.runner import ProbeOutcome
from driftcheck.redact import Redactor
from driftcheck.render import diff_text, log_text, snapshot_text
from driftcheck.snapshot.canonical import pretty_json
from driftcheck.snapshot.diff import diff_report, diff_snapshots
from driftcheck.snapshot.resolve import resolve_snapshot
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.store import Store
from driftcheck.take import take_snapshot

EXIT_OK, EXIT_DIFFERENT, EXIT_TROUBLE = 0, 1, 2

SNAPSHOT_REF_HELP = "a snapshot file, a stored id (or unique prefix), @latest, @prev or @N (N-th newest, 0-based)"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit code 2 (its default code, our message)."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_TROUBLE, f"{self.prog}: error: {message} (see --help)\n")


def _write_new_file(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path`, refusing to replace an existing file unless `force`."""
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)


def _progress_printer(enabled: bool) -> Callable[[str, ProbeOutcome, int, int], None] | None:
    if not enabled:
        return None

    def report(name: str, outcome: ProbeOutcome, done: int, total: int) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r\033[Kprobing [{done}/{total}] {name}: {outcome.status} "
                         f"({outcome.duration_s:.2f} s){end}")
        sys.stderr.flush()

    return report


# --- snapshot ---------------------------------------------------------------------------------------

def _add_snapshot(sub: Any) -> None:
    p = sub.add_parser("snapshot", help="probe this machine and keep a signed snapshot",
                       description="Probe this machine, sign the result, keep it in the local store and "
                                   "print its id. Probes run concurrently, each under its own time limit; a "
                                   "probe that fails is recorded with its outcome and the rest goes on.")
    p.add_argument("-o", "--output", type=Path, help="also write the snapshot to this JSON file")
    p.add_argument("--force", action="store_true", help="overwrite the --output file if it exists")
    p.add_argument("--label", help="a note kept with the snapshot (e.g. 'before reboot')")
    p.add_argument("--probe", action="append", metavar="NAME",
                   help=f"take only this probe (repeatable); known: {', '.join(probe_names())}")
    p.add_argument("--skip", action="append", metavar="NAME", help="leave this probe out (repeatable)")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter whose packages matter (e.g. your ML venv's python); default: ours")
    p.add_argument("--no-sign", action="store_true", help="do not sign the snapshot")
    p.add_argument("--no-store", action="store_true", help="do not keep it in the local store (needs -o)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--bench", choices=("quick", "standard", "full"),
                   help="also run this calibrated benchmark suite (after the other probes) and embed it as "
                        "probe `bench`; needs torch")
    p.add_argument("--bench-budget-s", type=float, metavar="S", help=argparse.SUPPRESS)
    p.set_defaults(handler=_cmd_snapshot)


def _local_host(args: argparse.Namespace) -> Host:
    if args.python and not (Path(args.python).is_file() and os.access(args.python, os.X_OK)):
        raise UsageError(f"--python {args.python}: no executable interpreter there")
    return LocalHost(args.python)


def _cmd_snapshot(args: argparse.Namespace) -> int:
    if args.no_store and not args.output:
        raise UsageError("--no-store keeps the snapshot nowhere; add -o FILE")
    if args.output and args.output.exists() and not args.force:
        raise UsageError(f"{args.output} already exists; pass --force to overwrite it")
    host = _local_host(args)
    redactor = Redactor(load_redaction_secret())
    probes = select_probes(builtin_probes(redactor), args.probe, args.skip)
    if args.bench and all(p.name != "bench" for p in probes):
        probes += select_probes(builtin_probes(redactor), ["bench"])
    key = None if args.no_sign else load_signing_key()
    show_progress = not args.quiet and sys.stderr.isatty()
    options = ProbeOptions(extra=bench_options(args.bench, args.bench_budget_s))
    take = take_snapshot_then_bench if any(is_opt_in(p) for p in probes) else take_snapshot
    snapshot = take(host, probes, options, label=args.label, key=key, progress=_progress_printer(show_progress))
    if args.output:
        _write_new_file(args.output, pretty_json(snapshot.document), args.force)
    if not args.no_store:
        Store().add(snapshot)
    counts = ", ".join(f"{status} {n}" for status, n in snapshot.status_counts().items())
    where = " and ".join(filter(None, [None if args.no_store else "store", str(args.output or "") or None]))
    if not args.quiet:
        sys.stderr.write(f"snapshot {snapshot.short_id} of {snapshot.host_name} saved to {where} "
                         f"({len(probes)} probes: {counts})\n")
    print(snapshot.short_id)
    return EXIT_OK


# --- show -------------------------------------------------------------------------------------------

def _add_show(sub: Any) -> None:
    p = sub.add_parser("show", help="print a snapshot", description="Print a snapshot's probes and facts.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP)
    p.add_argument("--format", choices=("text", "json", "yaml"), default="text", help="output format (default text)")
    p.set_defaults(handler=_cmd_show)


def _cmd_show(args: argparse.Namespace) -> int:
    snapshot = resolve_snapshot(args.snapshot)
    if args.format == "json":
        sys.stdout.write(pretty_json(snapshot.document))
    elif args.format == "yaml":
        sys.stdout.write(yaml.safe_dump(snapshot.document, sort_keys=True, allow_unicode=True))
    else:
        verdict = verify_document(snapshot.document)
        sys.stdout.write(snapshot_text(snapshot, verdict.fingerprint if verdict.intact else None))
    return EXIT_OK


# --- verify -----------------------------------------------------------------------------------------

def _add_verify(sub: Any) -> None:
    p = sub.add_parser("verify", help="check a snapshot's signature",
                       description="Check that a snapshot is signed and unaltered. Exit 0 when intact (and "
                                   "signed by a trusted key, if --trust is given), 1 when unsigned, altered "
                                   "or signed by another key, 2 when it cannot be read.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP)
    p.add_argument("--trust", action="append", metavar="KEY",
                   help="a public key or fingerprint (from `driftcheck key`) to accept; repeatable")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.set_defaults(handler=_cmd_verify)


def _cmd_verify(args: argparse.Namespace) -> int:
    snapshot = resolve_snapshot(args.snapshot, check_signature=False)
    verdict = verify_document(snapshot.document, args.trust)
    if args.format == "json":
        print(json.dumps({"snapshot": snapshot.source, "id": snapshot.id, "status": verdict.status,
                          "fingerprint": verdict.fingerprint, "message": verdict.message}, sort_keys=True))
    else:
        print(f"{snapshot.source}: {verdict.message}")
    return EXIT_OK if verdict.intact else EXIT_DIFFERENT


# --- key --------------------------------------------------------------------------------------------

def _add_key(sub: Any) -> None:
    p = sub.add_parser("key", help="print your public signing key and its fingerprint",
                       description="Print the public key that signs your snapshots (created on first use) "
                                   "and its fingerprint; give either to `driftcheck verify --trust`.")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.set_defaults(handler=_cmd_key)


def _cmd_key(args: argparse.Namespace) -> int:
    key = load_signing_key()
    if args.format == "json":
        print(json.dumps({"algorithm": "ed25519", "public_key": key.public_key_b64,
                          "fingerprint": key.fingerprint, "path": str(key.path)}, sort_keys=True))
    else:
        print(f"public key:  {key.public_key_b64}\nfingerprint: {key.fingerprint}\nprivate key: {key.path}")
    return EXIT_OK


# --- log --------------------------------------------------------------------------------------------

def _add_log(sub: Any) -> None:
    p = sub.add_parser("log", help="list stored snapshots, newest first",
                       description="List the snapshots in the local store, newest first; the first column "
                                   "is the N of @N.")
    p.add_argument("-n", "--limit", type=int, default=None, help="show at most N snapshots")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.set_defaults(handler=_cmd_log)


def _cmd_log(args: argparse.Namespace) -> int:
    entries = Store().entries(args.limit)
    if args.format == "json":
        print(json.dumps([{"position": i, "id": e.id, "created_at": e.created_at, "host": e.host,
                           "label": e.label, "status_counts": e.status_counts}
                          for i, e in enumerate(entries)], indent=2, sort_keys=True))
    else:
        sys.stdout.write(log_text(entries))
    return EXIT_OK


# --- diff -------------------------------------------------------------------------------------------

def _add_diff(sub: Any) -> None:
    p = sub.add_parser("diff", help="compare two snapshots",
                       description="Compare snapshot A (before) with B (after). Exit 0 when nothing relevant "
                                   "differs, 1 when something does, 2 when a snapshot cannot be read.")
    p.add_argument("a", help=SNAPSHOT_REF_HELP)
    p.add_argument("b", help=SNAPSHOT_REF_HELP)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--all", action="store_true",
                   help="also show volatile facts (timestamps, shell variables, who took the snapshot)")
    p.set_defaults(handler=_cmd_diff)


def _cmd_diff(args: argparse.Namespace) -> int:
    store = Store()
    a = resolve_snapshot(args.a, store)
    b = resolve_snapshot(args.b, store)
    diff = diff_snapshots(a, b)
    if args.format == "json":
        print(json.dumps(diff_report(diff, args.all), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        sys.stdout.write(diff_text(diff, args.all))
    return EXIT_DIFFERENT if diff.changes else EXIT_OK


# --- bench ------------------------------------------------------------------------------------------

def _add_bench(sub: Any) -> None:
    p = sub.add_parser("bench", help="run the calibrated baseline benchmarks, or measure a serving stack",
                       description="Run a calibrated benchmark suite (warm-up until settled, repeat until the "
                                   "95% CI of each median is within ±1% or the budget is spent) and print "
                                   "median, n, CV and CI per benchmark. With --server, measure a running "
                                   "OpenAI-compatible server (SGLang, vLLM) instead. Needs torch (suites) "
                                   "or sglang (--sglang-model).")
    p.add_argument("--suite", choices=SUITES, default="quick", help="which suite (default quick)")
    p.add_argument("--device", choices=DEVICES, default="auto", help="where to run (default auto)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--budget-s", type=float, metavar="S",
                   help="total time budget of the suite instead of its default (small: a fast smoke run)")
    p.add_argument("--only", action="append", metavar="TEXT",
                   help="run only benchmarks whose name contains TEXT (repeatable)")
    p.add_argument("--server", metavar="URL", help="measure the OpenAI-compatible server at URL")
    p.add_argument("--sglang-model", metavar="PATH", help="measure sglang's offline engine on this model")
    p.add_argument("--model", help="model name to request from --server (default: its first listed model)")
    p.add_argument("--requests", type=int, default=ServingPlan.requests, help="requests per concurrency level")
    p.add_argument("--concurrency", type=int, default=ServingPlan.concurrency,
                   help="the fixed concurrency measured besides 1 (default %(default)s)")
    p.add_argument("--prompt-words", type=int, default=ServingPlan.prompt_words, help=argparse.SUPPRESS)
    p.add_argument("--output-tokens", type=int, default=ServingPlan.output_tokens,
                   help="tokens generated per request (default %(default)s)")
    p.add_argument("-o", "--output", type=Path, help="also write the JSON results to this file")
    p.add_argument("--force", action="store_true", help="overwrite the --output file if it exists")
    p.set_defaults(handler=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.output and args.output.exists() and not args.force:
        raise UsageError(f"{args.output} already exists; pass --force to overwrite it")
    if args.server and args.sglang_model:
        raise UsageError("--server and --sglang-model measure different things; give one")
    plan = ServingPlan(requests=args.requests, prompt_words=args.prompt_words, output_tokens=args.output_tokens,
                       concurrency=args.concurrency, model=args.model)
    if args.server:
        data = measure_server(args.server, plan)
    elif args.sglang_model:
        data = measure_sglang_engine(args.sglang_model, plan)
    else:
        data = run_suite(args.suite, args.device, args.budget_s, args.only)
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
    if args.output:
        _write_new_file(args.output, text + "\n", args.force)
    sys.stdout.write(text + "\n" if args.format == "json" else results_text(data))
    return EXIT_OK


# --- main -------------------------------------------------------------------------------------------

COMMANDS = (_add_snapshot, _add_show, _add_verify, _add_key, _add_log, _add_diff, _add_bench)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, one sub-command per `COMMANDS` entry."""
    parser = _Parser(prog="driftcheck",
                     description="Record the state of a GPU benchmark/inference machine in signed snapshots, "
                                 "and compare two of them to see what changed.",
                     epilog="Exit codes: 0 no relevant difference / all well, 1 differences or a failed "
                            "verification, 2 trouble. Files live under $DRIFTCHECK_HOME when it is set.")
    parser.add_argument("--version", action="version", version=f"driftcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except DriftcheckError as exc:
        sys.stderr.write(f"driftcheck: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("driftcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        # `driftcheck show ... | head`: the reader left; nothing is wrong with the snapshot.
        sys.stderr.close()
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
