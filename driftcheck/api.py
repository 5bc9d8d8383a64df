"""The Python face for harnesses: `take_snapshot(...)` and `check(...)`, the calls the CLI itself makes.

A benchmark script gates itself without a subprocess:

    import driftcheck
    result = driftcheck.check(against="baseline:default")
    if result.drift:
        raise SystemExit(result.explained.explanations[0].title)
    driftcheck.take_snapshot(label="after run")

Errors are the typed ones of `driftcheck.errors`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftcheck.analysis.diff import SnapshotDiff, diff_snapshots
from driftcheck.analysis.explain import Explained
from driftcheck.analysis.explain import explain as explain_diff
from driftcheck.analysis.gate import (
    DEFAULT_MIN_CONFIDENCE,
    CheckResult,
    check_against,
    check_reference,
    probes_to_check,
    retaken_target,
)
from driftcheck.analysis.policy import Policy, load_policy
from driftcheck.analysis.references import resolve_snapshot
from driftcheck.errors import UsageError
from driftcheck.hosts import Host, LocalHost, ReplayHost
from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.bench import bench_options
from driftcheck.probes.kernels import HashProgress, attach_hash_progress
from driftcheck.probes.prober import take_snapshot as probe_and_sign
from driftcheck.probes.record import replay_options
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import ProgressCallback
from driftcheck.probes.server import SERVER_OPTION, server_options
from driftcheck.snapshot.keys import load_redaction_secret, load_signing_key
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

__all__ = ["CheckResult", "Snapshot", "bench_rerun", "check", "diff", "explain", "load", "make_probe_options",
           "take_snapshot", "target_host"]


def target_host(python: str | None = None) -> LocalHost:
    """This machine, with `python` (checked to be an executable) as the interpreter whose packages matter."""
    if python and not (Path(python).is_file() and os.access(python, os.X_OK)):
        raise UsageError(f"--python {python}: no executable interpreter there")
    return LocalHost(python)


def make_probe_options(pids: Sequence[int] = (), processes: Sequence[str] = (), deep: bool = False,
                       bench: str | None = None, bench_budget_s: float | None = None, *,
                       server: str | None = None, bench_runs: int | None = None) -> ProbeOptions:
    """Probe options, checked: a non-positive pid, a pattern that is not a regex or a `server` that is not an
    http(s) URL is a UsageError. `server` asks for the `server` probe (the engine's own report of its settings);
    `bench_runs` the number of independent runs of `bench`."""
    bad_pids = [pid for pid in pids if pid <= 0]
    if bad_pids:
        raise UsageError(f"--pid {bad_pids[0]}: a process id is a positive number")
    for pattern in processes:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"--process {pattern!r}: not a regular expression ({exc})") from exc
    return ProbeOptions(deep=deep, pids=tuple(pids), process_patterns=tuple(processes),
                        extra={**bench_options(bench, bench_budget_s, bench_runs), **server_options(server)})


def _host_and_options(python: str | None, replay: str | Path | None, options: ProbeOptions,
                      host: Host | None = None) -> tuple[Host, ProbeOptions]:
    """`host` if given, else this machine, or the recording `replay` names, and the options to probe it with."""
    if host is not None:
        if python or replay is not None:
            raise UsageError("a host given as an object carries its interpreter; no python or replay with it")
        return host, options
    if replay is None:
        return target_host(python), options
    if options.extra.get(SERVER_OPTION):
        raise UsageError("--server and --replay do not go together: a recording holds no server answers")
    if python:
        raise UsageError("--python and --replay do not go together: a recording holds its interpreter's facts")
    host = ReplayHost(replay)
    return host, replay_options(host, options.pids, options.process_patterns)


def take_snapshot(*, label: str | None = None, probes: Sequence[str] | None = None, skip: Sequence[str] | None = None,
             python: str | None = None, replay: str | Path | None = None, host: Host | None = None,
             pids: Sequence[int] = (),
             processes: Sequence[str] = (), deep: bool = False, bench: str | None = None,
             bench_budget_s: float | None = None, bench_runs: int | None = None, server: str | None = None,
             cheap_only: bool = False, sign: bool = True, keep: bool = True, store: Store | None = None,
             progress: ProgressCallback | None = None,
             hash_progress: HashProgress | None = None) -> Snapshot:
    """Probe this machine (or the recording `replay`) and return the signed snapshot, kept in the store.

    `host` is another machine to probe (e.g. a connected `driftcheck.hosts.ssh.SSHHost`).
    `probes`/`skip` choose probes by name (default: every probe the options do not hold back;
    `cheap_only`: the cheap set `check` takes). `python` is the interpreter whose packages matter.
    `pids`/`processes` also describe running processes; `server` (a URL) records what the SGLang / vLLM /
    OpenAI-compatible server there reports about itself; `bench` (quick|standard|full) embeds a
    calibrated benchmark (`bench_runs` independent runs, default 1). `sign=False` leaves it unsigned;
    `keep=False` keeps it out of `store` (default: the user's store). `progress`/`hash_progress` receive
    progress reports.
    """
    target, options = _host_and_options(python, replay, make_probe_options(pids, processes, deep, bench,
                                                                            bench_budget_s, server=server,
                                                                            bench_runs=bench_runs), host)
    redactor = Redactor(load_redaction_secret())
    chosen = select_probes(builtin_probes(redactor), list(probes) if probes else None,
                           list(skip) if skip else None, cheap_only=cheap_only, options=options)
    attach_hash_progress(chosen, hash_progress)
    taken = probe_and_sign(target, chosen, options, label=label, key=load_signing_key() if sign else None,
                          progress=progress)
    if keep:
        (store or Store()).add(taken)
    return taken


def bench_rerun(reference: Snapshot, bench: bool | None, runs: int | None) -> dict[str, Any]:
    """The `snapshot` arguments that rerun `reference`'s benchmarks as it ran them ({} for none)."""
    if runs is not None and runs < 1:
        raise UsageError("--runs must be at least 1")
    recorded = reference.probe_data("bench")
    if bench is False:
        return {}
    if not recorded or not recorded.get("results") or not recorded.get("suite"):
        if bench:
            raise UsageError(f"the reference {reference.short_id} holds no benchmark results to rerun; "
                             "save one with `driftcheck baseline save NAME --bench quick`")
        return {}
    budget = recorded.get("budget_s")
    return {"bench": str(recorded["suite"]), "bench_runs": runs or int(recorded.get("runs") or 1),
            "bench_budget_s": float(budget) if isinstance(budget, (int, float)) else None}


def check(against: str | Snapshot | None = None, *, policy: Policy | str | Path | None = None,
          probes: Sequence[str] | None = None, python: str | None = None, host: Host | None = None,
          min_confidence: float = DEFAULT_MIN_CONFIDENCE, label: str = "driftcheck check", keep: bool = True,
          store: Store | None = None, progress: ProgressCallback | None = None, bench: bool | None = None,
          bench_runs: int | None = None) -> CheckResult:
    """The pre-benchmark gate: a fresh snapshot (cheap probes) compared with `against`, under `policy`.

    `against` is a baseline name, any snapshot reference (`@before-boot`, a file, an id) or a Snapshot;
    default: baseline `default`, else the newest snapshot probed on this host. `policy` is a Policy or
    the path of a policy YAML file. The fresh snapshot takes `probes` (default: the cheap probes the
    reference holds) and is kept in `store` unless `keep=False`. `result.drift` is the verdict.
    `host` checks another machine (e.g. a connected SSHHost) instead of this one.

    When the reference carries benchmark results, the fresh snapshot reruns the same suite with the
    same number of runs and budget (`bench_runs` overrides the runs; `bench=False` skips it), and a
    benchmark that is `slower` or `faster` beyond its minimum detectable shift is drift.
    """
    store = store or Store()
    rules = load_policy(Path(policy)) if isinstance(policy, (str, Path)) else policy
    target = host or target_host(python)
    reference = against if isinstance(against, Snapshot) else check_reference(against, store, target.name)
    # Take what the reference has (cheap probes only), so nothing reads as "taken on one side only".
    rerun = bench_rerun(reference, bench, bench_runs)
    # The reference's own target (its interpreter, its server) unless the caller names another.
    recorded = retaken_target(reference, python, target.name, local=host is None)
    fresh = take_snapshot(label=label, probes=list(probes or probes_to_check(reference)) or None,
                     python=None if host else recorded.python, host=host, cheap_only=True, keep=False,
                     progress=progress, server=recorded.server, **rerun)
    result = check_against(reference, fresh, rules, min_confidence)
    if keep:
        store.add(fresh)
    return result


def load(reference: str, store: Store | None = None) -> Snapshot:
    """The snapshot `reference` names: a file (a snapshot or a pasted report), an id or its prefix,
    `@latest`, `@prev`, `@N`, `@boot`, `@before-boot`, `baseline:NAME` or `run:ID`."""
    return resolve_snapshot(reference, store or Store())


def diff(a: Snapshot, b: Snapshot) -> SnapshotDiff:
    """Every difference between two snapshots, each with its category (volatile ones marked)."""
    return diff_snapshots(a, b)


def explain(a: Snapshot, b: Snapshot) -> Explained:
    """The differences between `a` and `b` ranked by how likely each moved performance, with fixes."""
    return explain_diff(diff_snapshots(a, b))
