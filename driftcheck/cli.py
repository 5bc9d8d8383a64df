"""The `driftcheck` command line. Thin: it parses, calls the library, prints, and maps errors to exit codes.

Exit codes follow diff(1): 0 nothing relevant differs (or all is well), 1 differences (or a failed
verification), 2 trouble (bad input, unreadable snapshot, missing library or host).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from driftcheck import __version__
from driftcheck.baselines.render import results_text
from driftcheck.baselines.serving import ServingPlan, measure_server, measure_sglang_engine
from driftcheck.baselines.suites import DEVICES, SUITES, run_suite
from driftcheck.check import DEFAULT_MIN_CONFIDENCE, check_against, check_reference, load_policy, probes_to_check
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.host import Host, LocalHost
from driftcheck.importer import import_snapshot
from driftcheck.keys import load_redaction_secret, load_signing_key
from driftcheck.probes import builtin_probes, probe_names, select_probes
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.bench import bench_options
from driftcheck.probes.kernels import attach_hash_progress, hash_cache_note
from driftcheck.probes.runner import ProbeOutcome
from driftcheck.record import ensure_empty_directory, record, replay_options
from driftcheck.recording import ReplayHost
from driftcheck.redact import Redactor
from driftcheck.render import diff_text, log_text, snapshot_text
from driftcheck.snapshot.baselines import Baselines
from driftcheck.snapshot.canonical import pretty_json
from driftcheck.snapshot.confirm import bench_runner, confirm
from driftcheck.snapshot.diff import diff_snapshots
from driftcheck.snapshot.explain import explain, explain_report
from driftcheck.snapshot.explain_render import explain_markdown, explain_text
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.resolve import resolve_snapshot
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.store import Store
from driftcheck.take import take_snapshot

EXIT_OK, EXIT_DIFFERENT, EXIT_TROUBLE = 0, 1, 2

SNAPSHOT_REF_HELP = ("a snapshot file, a stored id (or unique prefix), @latest, @prev, @N (N-th newest, 0-based) "
                     "or baseline:NAME")


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit code 2 (its default code, our message)."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_TROUBLE, f"{self.prog}: error: {message} (see --help)\n")


def _check_output_path(path: Path, force: bool) -> None:
    """Refuse, before any work, an output path that cannot be written or would replace a file unasked."""
    if path.is_dir():
        raise UsageError(f"{path} is a directory; give a file name")
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")
    if not path.parent.is_dir():
        raise UsageError(f"{path}: directory {path.parent} does not exist")


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def _write_new_file(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path` through a temporary file, refusing to replace an existing file unless `force`."""
    _check_output_path(path, force)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, "utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _progress_printer(enabled: bool) -> Callable[[str, ProbeOutcome, int, int], None] | None:
    if not enabled:
        return None

    def report(name: str, outcome: ProbeOutcome, done: int, total: int) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r\033[Kprobing [{done}/{total}] {name}: {outcome.status} "
                         f"({outcome.duration_s:.2f} s){end}")
        sys.stderr.flush()

    return report


def _hash_progress_printer() -> Callable[[int, int, int, int], None]:
    def report(done: int, total: int, done_bytes: int, total_bytes: int) -> None:
        sys.stderr.write(f"\r\033[Khashing compiled files [{done}/{total}] "
                         f"{done_bytes / 2**20:.0f}/{total_bytes / 2**20:.0f} MiB")
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
    _add_process_arguments(p)
    p.add_argument("--replay", metavar="DIR", type=Path,
                   help="build the snapshot from a recording (`driftcheck record`) instead of this machine")
    p.add_argument("--deep", action="store_true",
                   help="also import torch in the target interpreter for its runtime facts (about a second)")
    p.add_argument("--no-sign", action="store_true", help="do not sign the snapshot")
    p.add_argument("--no-store", action="store_true", help="do not keep it in the local store (needs -o)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--bench", choices=("quick", "standard", "full"),
                   help="also run this calibrated benchmark suite (after the other probes) and embed it as "
                        "probe `bench`; needs torch")
    p.add_argument("--bench-budget-s", type=float, metavar="S", help=argparse.SUPPRESS)
    p.set_defaults(handler=_cmd_snapshot)


def _add_process_arguments(p: Any) -> None:
    p.add_argument("--pid", action="append", type=int, default=[], metavar="PID",
                   help="also describe this running process (e.g. the SGLang/vLLM server); repeatable")
    p.add_argument("--process", action="append", default=[], metavar="PATTERN",
                   help="also describe running processes whose command line matches this regex; repeatable")


def _probe_options(args: argparse.Namespace) -> ProbeOptions:
    """The probe options of --pid/--process, checked (a bad pid or regex is a usage error)."""
    bad_pids = [pid for pid in args.pid if pid <= 0]
    if bad_pids:
        raise UsageError(f"--pid {bad_pids[0]}: a process id is a positive number")
    for pattern in args.process:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"--process {pattern!r}: not a regular expression ({exc})") from exc
    return ProbeOptions(deep=bool(getattr(args, "deep", False)), pids=tuple(args.pid),
                        process_patterns=tuple(args.process),
                        extra=bench_options(getattr(args, "bench", None), getattr(args, "bench_budget_s", None)))


def _snapshot_host(args: argparse.Namespace) -> tuple[Host, ProbeOptions]:
    """This machine, or the recording given with --replay, and the options to probe it with."""
    options = _probe_options(args)
    if args.replay is None:
        return _target_host(args.python), options
    if args.python:
        raise UsageError("--python and --replay do not go together: a recording holds its interpreter's facts")
    host = ReplayHost(args.replay)
    return host, replay_options(host, options.pids, options.process_patterns)


def _target_host(python: str | None) -> LocalHost:
    """This machine, with `python` (checked to be an executable) as the interpreter whose packages matter."""
    if python and not (Path(python).is_file() and os.access(python, os.X_OK)):
        raise UsageError(f"--python {python}: no executable interpreter there")
    return LocalHost(python)


def _check_keep(args: argparse.Namespace) -> None:
    """Refuse, before any work, a `-o`/`--no-store` combination `_keep` could not honour."""
    if args.no_store and not args.output:
        raise UsageError("--no-store keeps the snapshot nowhere; add -o FILE")
    if args.output:
        _check_output_path(args.output, args.force)


def _keep(snapshot: Snapshot, args: argparse.Namespace) -> str:
    """Write the snapshot to `-o` and the store as asked; returns where it went, for the message."""
    places = []
    if args.output:
        _write_new_file(args.output, pretty_json(snapshot.document), args.force)
        places.append(str(args.output))
    if not args.no_store:
        Store().add(snapshot)
        places.insert(0, "store")
    return " and ".join(places)


def _cmd_snapshot(args: argparse.Namespace) -> int:
    _check_keep(args)
    host, options = _snapshot_host(args)
    redactor = Redactor(load_redaction_secret())
    probes = select_probes(builtin_probes(redactor), args.probe, args.skip, options=options)
    key = None if args.no_sign else load_signing_key()
    show_progress = not args.quiet and sys.stderr.isatty()
    attach_hash_progress(probes, _hash_progress_printer() if show_progress else None)
    snapshot = take_snapshot(host, probes, options, label=args.label, key=key,
                             progress=_progress_printer(show_progress))
    where = _keep(snapshot, args)
    counts = ", ".join(f"{status} {n}" for status, n in snapshot.status_counts().items())
    note = hash_cache_note(snapshot.probe_data("kernels"))
    if note and not args.quiet:
        sys.stderr.write(note + "\n")
    if not args.quiet:
        sys.stderr.write(f"snapshot {snapshot.short_id} of {snapshot.host_name} saved to {where} "
                         f"({len(probes)} probes: {counts})\n")
    print(snapshot.short_id)
    return EXIT_OK


# --- record -----------------------------------------------------------------------------------------

def _add_record(sub: Any) -> None:
    p = sub.add_parser("record", help="save the probes' raw inputs on this machine, redacted, for replay",
                       description="Run the probes and save everything they read (files, listings, command "
                                   "output, interpreter facts) to DIR, with secrets redacted as in a snapshot. "
                                   "`driftcheck snapshot --replay DIR` builds a snapshot from it, here or on "
                                   "another machine, with this or a newer driftcheck. DIR must be new or empty.")
    p.add_argument("directory", type=Path, metavar="DIR", help="a new or empty directory")
    p.add_argument("--probe", action="append", metavar="NAME",
                   help=f"record only this probe (repeatable); known: {', '.join(probe_names())}")
    p.add_argument("--skip", action="append", metavar="NAME", help="leave this probe out (repeatable)")
    p.add_argument("--python", metavar="PATH", help="the interpreter whose packages matter; default: ours")
    _add_process_arguments(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(handler=_cmd_record)


def _cmd_record(args: argparse.Namespace) -> int:
    ensure_empty_directory(args.directory)
    options = _probe_options(args)
    redactor = Redactor(load_redaction_secret())
    probes = select_probes(builtin_probes(redactor), args.probe, args.skip, options=options)
    show_progress = not args.quiet and sys.stderr.isatty()
    result = record(args.directory, _target_host(args.python), probes, redactor, options,
                    progress=_progress_printer(show_progress))
    counts: dict[str, int] = {}
    for outcome in result.outcomes.values():
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    summary = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    if not args.quiet:
        sys.stderr.write(f"recorded {result.files} files and {result.commands} commands from {len(probes)} "
                         f"probes ({summary}); replay with: driftcheck snapshot --replay {result.directory}\n")
    print(result.directory)
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
    p.add_argument("-n", "--limit", type=_positive_int, default=None, help="show at most N snapshots (N >= 1)")
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
    explained = explain(diff, include_volatile=args.all)
    if args.format == "json":
        print(json.dumps(explain_report(explained, args.all), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        # A reading a plain diff hides (a clock under load, the boot id) is shown when a cause rests on it.
        evidence = explained.evidence_paths()
        sys.stdout.write(diff_text(diff, args.all, also=[c for c in diff.volatile if c.path in evidence]))
    return EXIT_DIFFERENT if diff.changes or explained.explanations else EXIT_OK


# --- import -----------------------------------------------------------------------------------------

def _add_import(sub: Any) -> None:
    p = sub.add_parser("import", help="build a snapshot from pasted nvidia-smi outputs",
                       description="Build a partial snapshot (gpu and pcie probes, origin 'imported') from "
                                   "`nvidia-smi -q -x`, `nvidia-smi -q`, `--query-gpu` CSV and "
                                   "`nvidia-smi topo -m` outputs, the format detected from the content. Files "
                                   "of one machine combine: one GPU description plus one topology matrix. Kept "
                                   "in the store like a snapshot and unsigned unless --sign: a signature would "
                                   "vouch for facts driftcheck did not observe.")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="an nvidia-smi output (repeatable)")
    p.add_argument("-o", "--output", type=Path, help="also write the snapshot to this JSON file")
    p.add_argument("--force", action="store_true", help="overwrite the --output file if it exists")
    p.add_argument("--label", help="a note kept with the snapshot (e.g. 'from issue 1234')")
    p.add_argument("--sign", action="store_true", help="sign it with your key (you vouch for the import)")
    p.add_argument("--no-store", action="store_true", help="do not keep it in the local store (needs -o)")
    p.set_defaults(handler=_cmd_import)


def _cmd_import(args: argparse.Namespace) -> int:
    _check_keep(args)
    snapshot = import_snapshot(args.files, label=args.label, key=load_signing_key() if args.sign else None)
    where = _keep(snapshot, args)
    kinds = ", ".join(f"{s['file']} ({s['format']})" for s in snapshot.document["host"]["sources"])
    sys.stderr.write(f"imported {kinds} as snapshot {snapshot.short_id}, saved to {where}\n")
    print(snapshot.short_id)
    return EXIT_OK


# --- explain ----------------------------------------------------------------------------------------

def _add_explain(sub: Any) -> None:
    p = sub.add_parser("explain", help="rank the differences most likely to explain a performance shift",
                       description="Compare snapshot A (before) with B (after) and rank the differences by how "
                                   "likely they are to explain a performance shift, each with its evidence and "
                                   "the command that would undo it; list the usual suspects found unchanged. "
                                   "Exit 0 when nothing relevant differs, 1 when something does, 2 on trouble.")
    p.add_argument("a", help=SNAPSHOT_REF_HELP)
    p.add_argument("b", help=SNAPSHOT_REF_HELP)
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                   help="output format (default text; colour only on a terminal)")
    p.add_argument("--all", action="store_true", help="also weigh volatile facts (timestamps, shell variables)")
    p.add_argument("--confirm", action="store_true",
                   help="for the top causes that one process can revert (env vars), rerun the calibrated "
                        "benchmark here with A's value and report whether the number moves back")
    p.set_defaults(handler=_cmd_explain)


def _cmd_explain(args: argparse.Namespace) -> int:
    store = Store()
    a = resolve_snapshot(args.a, store)
    b = resolve_snapshot(args.b, store)
    result = explain(diff_snapshots(a, b), include_volatile=args.all)
    confirmations = None
    if args.confirm:
        run, why_not = bench_runner()
        confirmations = confirm(result, run, why_not)
    if args.format == "json":
        report = explain_report(result, args.all)
        if confirmations is not None:
            for row in report["explanations"]:
                if row["rank"] in confirmations:
                    row["confirm"] = confirmations[row["rank"]]
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
    elif args.format == "markdown":
        sys.stdout.write(explain_markdown(result, confirmations))
    else:
        sys.stdout.write(explain_text(result, _use_colour(), confirmations))
    return EXIT_DIFFERENT if result.explanations else EXIT_OK


def _use_colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


# --- baseline ---------------------------------------------------------------------------------------

def _add_baseline(sub: Any) -> None:
    p = sub.add_parser("baseline", help="name snapshots as baselines (baseline:NAME)",
                       description="Named baselines: a name pointing at a stored snapshot, usable anywhere a "
                                   "snapshot is as baseline:NAME. `driftcheck check` compares with `default`.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    actions.required = True
    save = actions.add_parser("save", help="name a snapshot (default: take one now)")
    save.add_argument("name", help="the baseline's name (letters, digits, . _ -)")
    save.add_argument("snapshot", nargs="?", help=f"{SNAPSHOT_REF_HELP}; default: a fresh snapshot of all probes")
    save.add_argument("--force", action="store_true", help="re-point an existing name")
    save.add_argument("--label", help="label of the fresh snapshot (when SNAP is not given)")
    save.add_argument("--python", metavar="PATH", help="the interpreter whose packages matter (fresh snapshot)")
    lst = actions.add_parser("list", help="list baselines")
    lst.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    show = actions.add_parser("show", help="print a baseline's snapshot")
    show.add_argument("name")
    show.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    rm = actions.add_parser("rm", help="forget a baseline (its snapshot stays in the store)")
    rm.add_argument("name")
    p.set_defaults(handler=_cmd_baseline)


def _fresh_snapshot(python: str | None, label: str | None, only: list[str] | None = None,
                    cheap_only: bool = False) -> Any:
    host = _target_host(python)
    probes = select_probes(builtin_probes(Redactor(load_redaction_secret())), only, None, cheap_only=cheap_only)
    return take_snapshot(host, probes, ProbeOptions(), label=label, key=load_signing_key())


def _cmd_baseline(args: argparse.Namespace) -> int:
    store = Store()
    baselines = Baselines(store)
    if args.action == "save":
        snapshot = resolve_snapshot(args.snapshot, store) if args.snapshot else \
            _fresh_snapshot(args.python, args.label or f"baseline {args.name}")
        saved = baselines.save(args.name, snapshot, args.force)
        print(f"baseline {saved.name} -> {saved.snapshot_id[:12]} ({saved.host})")
    elif args.action == "list":
        entries = baselines.entries()
        if args.format == "json":
            print(json.dumps([e.to_json() for e in entries], indent=2, sort_keys=True))
        elif not entries:
            print("no baselines yet; `driftcheck baseline save NAME [SNAP]`")
        else:
            for e in entries:
                print(f"{e.name}  {e.snapshot_id[:12]}  {e.saved_at[:19].replace('T', ' ')}  {e.host}"
                      + (f"  {e.label!r}" if e.label else ""))
    elif args.action == "show":
        entry = baselines.get(args.name)
        snapshot = baselines.snapshot(args.name)
        if args.format == "json":
            print(json.dumps({**entry.to_json(), "snapshot": snapshot.document}, indent=2, sort_keys=True))
        else:
            print(f"baseline {entry.name} (saved {entry.saved_at})")
            verdict = verify_document(snapshot.document)
            sys.stdout.write(snapshot_text(snapshot, verdict.fingerprint if verdict.intact else None))
    else:
        removed = baselines.remove(args.name)
        print(f"baseline {removed.name} removed (snapshot {removed.snapshot_id[:12]} stays in the store)")
    return EXIT_OK


# --- check ------------------------------------------------------------------------------------------

def _add_check(sub: Any) -> None:
    p = sub.add_parser("check", help="pre-benchmark gate: fresh snapshot vs baseline, exit 1 on drift",
                       description="Take a fresh snapshot (cheap probes unless --probe), compare it with the "
                                   "reference (default: baseline `default`, else the previous snapshot), print "
                                   "the explanation and any policy violation. Exit 0 no relevant drift, 1 drift "
                                   "or a policy violation, 2 trouble.")
    p.add_argument("--against", metavar="NAME|SNAP",
                   help=f"a baseline name or {SNAPSHOT_REF_HELP}")
    p.add_argument("--policy", type=Path, metavar="FILE", help="YAML policy: ignore, tolerances, must")
    p.add_argument("--probe", action="append", metavar="NAME",
                   help=f"take this probe (repeatable); default: the cheap ones; known: {', '.join(probe_names())}")
    p.add_argument("--python", metavar="PATH", help="the interpreter whose packages matter")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="output format")
    p.add_argument("--min-confidence", type=float, default=DEFAULT_MIN_CONFIDENCE, metavar="C",
                   help=f"causes below this confidence are shown but are not drift (default {DEFAULT_MIN_CONFIDENCE})")
    p.add_argument("--no-store", action="store_true", help="do not keep the fresh snapshot in the store")
    p.set_defaults(handler=_cmd_check)


def _cmd_check(args: argparse.Namespace) -> int:
    store = Store()
    policy = load_policy(args.policy) if args.policy else None
    reference = check_reference(args.against, store, _target_host(args.python).name)
    # Take what the reference has (cheap probes only), so nothing reads as "taken on one side only".
    fresh = _fresh_snapshot(args.python, "driftcheck check", args.probe or probes_to_check(reference) or None,
                            cheap_only=True)
    result = check_against(reference, fresh, policy, args.min_confidence)
    if not args.no_store:
        store.add(fresh)
    if args.format == "json":
        report = explain_report(result.explained)
        report["violations"] = result.violations
        report["drift"] = result.drift
        print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        render = explain_markdown(result.explained) if args.format == "markdown" else \
            explain_text(result.explained, _use_colour())
        sys.stdout.write(render)
        if result.violations:
            sys.stdout.write("\nPolicy violations:\n" + "".join(f"  ! {v}\n" for v in result.violations))
        sys.stdout.write(f"\ncheck: {'DRIFT' if result.drift else 'ok'} against {reference.short_id}\n")
    return EXIT_DIFFERENT if result.drift else EXIT_OK


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
    if args.output:
        _check_output_path(args.output, args.force)
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
        if args.only and not data.get("results"):
            raise UsageError(f"--only {' '.join(args.only)}: no benchmark of the {args.suite} suite matches")
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
    if args.output:
        _write_new_file(args.output, text + "\n", args.force)
    sys.stdout.write(text + "\n" if args.format == "json" else results_text(data))
    return EXIT_OK


# --- main -------------------------------------------------------------------------------------------

COMMANDS = (_add_snapshot, _add_show, _add_verify, _add_key, _add_log, _add_diff, _add_explain, _add_check,
            _add_baseline, _add_bench, _add_import, _add_record)


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
        # `driftcheck check | head`: the reader left before the end. Exit as a process killed by SIGPIPE
        # does (128 + 13), never 0: a gate's verdict must not turn into "all well" because of a pager.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
