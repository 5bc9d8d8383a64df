"""The Python face for harnesses: `take_snapshot(...)` and `check(...)`, the calls the CLI itself makes.

A benchmark script gates itself without a subprocess:

    import driftcheck
    result = driftcheck.check(driftcheck.CheckRequest(against="baseline:default"))
    if result.drift:
        raise SystemExit(result.explained.explanations[0].title)
    driftcheck.take_snapshot(driftcheck.SnapshotRequest(label="after run"))

Options travel as typed, frozen requests (`SnapshotRequest`, `CheckRequest`, `BenchRequest`), checked
when built: a bad value is an `OptionError` naming the field (`python=/x: no executable interpreter
there`). What is not an option (a connected host, the store, progress reporters) is a keyword argument.
Errors are the typed ones of `driftcheck.errors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from driftcheck.analysis.diff import SnapshotDiff, diff_snapshots
from driftcheck.analysis.explain import Explained
from driftcheck.analysis.explain import explain as explain_diff
from driftcheck.analysis.gate import (
    DEFAULT_MIN_CONFIDENCE,
    CheckResult,
    check_against,
    check_min_confidence,
    check_reference,
    probes_to_check,
    retaken_target,
)
from driftcheck.analysis.policy import Policy, load_policy
from driftcheck.analysis.references import resolve_snapshot
from driftcheck.analysis.signers import require_trusted, signers_for, signers_of
from driftcheck.analysis.targets import Target
from driftcheck.baselines.child import StepReporter
from driftcheck.baselines.extension import default_max_runs, first_look_runs
from driftcheck.errors import OptionError, UsageError
from driftcheck.hosts import Host
from driftcheck.hosts.targets import LOCAL, host_for
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.kernels import HashProgress
from driftcheck.probes.prober import Prober
from driftcheck.probes.record import replay_options
from driftcheck.probes.runner import ProgressCallback
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

__all__ = ["BenchRequest", "CheckRequest", "CheckResult", "Snapshot", "SnapshotRequest", "bench_rerun", "check",
           "diff", "explain", "load", "take_snapshot"]


def _frozen_tuple(request: object, name: str) -> None:
    """Store a sequence field of a frozen request as a tuple, so a list given by the caller cannot change it."""
    value = getattr(request, name)
    if value is not None:
        object.__setattr__(request, name, tuple(value))


@dataclass(frozen=True)
class SnapshotRequest:
    """What `take_snapshot` probes, where, and what it does with the result.

    `target`: `local` (this machine), `replay:DIR` (a recording from `driftcheck record`) or
    `[user@]host[:port]` (over SSH). `python`: the interpreter whose packages matter there.
    `probes`/`skip` choose probes by name (default: every probe the options do not hold back;
    `cheap_only`: the cheap set `check` takes). `pids`/`processes` (regexes) also describe running
    processes; `server` (an http(s) URL) records what the SGLang / vLLM / OpenAI-compatible server there
    reports about itself; `bench` embeds a calibrated benchmark. `sign=False` leaves it unsigned;
    `keep=False` keeps it out of the store. Checked when built (an OptionError names the field).
    """

    label: str | None = None
    probes: Sequence[str] = ()
    skip: Sequence[str] = ()
    target: str = LOCAL
    python: str | None = None
    pids: Sequence[int] = ()
    processes: Sequence[str] = ()
    deep: bool = False
    bench: BenchRequest | None = None
    server: str | None = None
    cheap_only: bool = False
    sign: bool = True
    keep: bool = True

    def __post_init__(self) -> None:
        for name in ("probes", "skip", "pids", "processes"):
            _frozen_tuple(self, name)
        self.probe_options()  # refuses a bad pid, pattern or URL now, not after the first probes ran

    def probe_options(self) -> ProbeOptions:
        """The options the probes see."""
        return ProbeOptions(deep=self.deep, pids=tuple(self.pids), process_patterns=tuple(self.processes),
                            bench=self.bench, server_url=self.server)


@dataclass(frozen=True)
class CheckRequest:
    """What `check` compares with, under which rules, and how it takes the fresh snapshot.

    `against`: a baseline name, any snapshot reference (`@before-boot`, a file, an id) or a Snapshot;
    default: baseline `default`, else the newest snapshot probed on the target. `policy`: a Policy or
    the path of a policy YAML file. `probes`: what the fresh snapshot takes (default: the cheap probes
    the reference holds). `target`/`python` as in SnapshotRequest. Causes below `min_confidence` are
    shown but are not drift. When the reference carries benchmark results, the fresh snapshot reruns
    the same suite with the same runs and budget, and up to `bench_max_runs` in all (default twice the runs)
    where the first runs leave a benchmark undecided: `bench_runs` overrides the runs, `rerun_bench=False`
    skips it, `rerun_bench=True` insists (an error when the reference holds none). `keep=False` keeps
    the fresh snapshot out of the store. `require_trusted` refuses (UntrustedSignerError) a reference signed
    by no key the user trusts, before anything is taken.
    """

    against: str | Snapshot | None = None
    policy: Policy | str | Path | None = None
    probes: Sequence[str] = ()
    target: str = LOCAL
    python: str | None = None
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    label: str = "driftcheck check"
    rerun_bench: bool | None = None
    bench_runs: int | None = None
    bench_max_runs: int | None = None
    keep: bool = True
    require_trusted: bool = False

    def __post_init__(self) -> None:
        _frozen_tuple(self, "probes")
        check_min_confidence(self.min_confidence)
        if self.bench_runs is not None and self.bench_runs < 1:
            raise OptionError("bench_runs", str(self.bench_runs), "must be at least 1")
        if self.bench_runs is not None and self.rerun_bench is False:
            raise OptionError("bench_runs", str(self.bench_runs), "sets the reruns that rerun_bench=False skips")
        if self.bench_max_runs is not None and self.bench_max_runs < 1:
            raise OptionError("bench_max_runs", str(self.bench_max_runs), "must be at least 1")
        if self.bench_max_runs is not None and self.rerun_bench is False:
            raise OptionError("bench_max_runs", str(self.bench_max_runs),
                              "sets the reruns that rerun_bench=False skips")


def _given_host(host: Host, target: str, python: str | None) -> Host:
    """`host`, refusing a target or interpreter beside it: a host object carries both."""
    if target != LOCAL or python:
        raise OptionError("host", host.name, "a host object carries its target and interpreter; "
                                             "give no target or python with it")
    return host


def _options_for(host: Host, options: ProbeOptions) -> ProbeOptions:
    """`options` as they apply to `host`: a recording is replayed with the options it was taken with."""
    if not host.capabilities.recorded:
        return options
    if options.server_url:
        raise OptionError("server", repr(options.server_url), "a recording holds no server answers")
    return replay_options(host, options.pids, options.process_patterns)


def take_snapshot(request: SnapshotRequest | None = None, *, host: Host | None = None, store: Store | None = None,
                  progress: ProgressCallback | None = None, hash_progress: HashProgress | None = None,
                  step_progress: StepReporter | None = None) -> Snapshot:
    """Probe the machine `request.target` names (or `host`, e.g. a connected SSHHost) and return the
    snapshot, signed and kept in `store` (default: the user's store) as the request says.

    `progress`/`hash_progress`/`step_progress` receive progress reports (probes done; compiled files
    hashed; steps inside a long probe, a benchmark's runs).
    """
    request = request or SnapshotRequest()
    reporters = (progress, hash_progress, step_progress)
    if host is not None:
        return _take(request, _given_host(host, request.target, request.python), store, reporters)
    with host_for(request.target, request.python) as opened:
        return _take(request, opened, store, reporters)


def _take(request: SnapshotRequest, host: Host, store: Store | None,
          reporters: tuple[ProgressCallback | None, HashProgress | None, StepReporter | None]) -> Snapshot:
    progress, hash_progress, step_progress = reporters
    prober = Prober.for_user(host, _options_for(host, request.probe_options()), sign=request.sign,
                             store=(store or Store()) if request.keep else None, progress=progress,
                             hash_progress=hash_progress, step_progress=step_progress)
    return prober.snapshot(prober.probes(request.probes, request.skip, request.cheap_only), label=request.label)


def bench_rerun(reference: Snapshot, rerun: bool | None = None, runs: int | None = None,
                max_runs: int | None = None) -> BenchRequest | None:
    """The benchmark that reruns `reference`'s as it ran (None: nothing to rerun, or `rerun` is False).

    `runs` overrides the recorded number of runs; benchmarks those runs leave undecided against the
    reference get more, up to `max_runs` in all (default: twice the runs; equal to them: never more).
    `rerun=True` makes a reference without results an error."""
    if rerun is False:
        return None
    recorded = reference.probe_data("bench")
    if not recorded or not recorded.get("results") or not recorded.get("suite"):
        if rerun:
            raise UsageError(f"the reference {reference.short_id} holds no benchmark results to rerun; "
                             "save one with `driftcheck baseline save NAME --bench quick`")
        return None
    budget = recorded.get("budget_s")
    runs = runs or first_look_runs(recorded)
    # BenchRequest refuses a max_runs under the runs.
    return BenchRequest(str(recorded["suite"]), runs, float(budget) if isinstance(budget, (int, float)) else None,
                        max_runs if max_runs is not None else default_max_runs(runs), dict(recorded))


def check(request: CheckRequest | None = None, *, host: Host | None = None, store: Store | None = None,
          progress: ProgressCallback | None = None, step_progress: StepReporter | None = None) -> CheckResult:
    """The pre-benchmark gate: a fresh snapshot (cheap probes) of the target compared with
    `request.against`, under `request.policy`. `result.drift` is the verdict; a benchmark rerun that is
    `slower` or `faster` beyond its minimum detectable shift is drift too.

    The fresh snapshot describes what the reference recorded about its target (its interpreter, when it was
    taken on this machine and the request names none; its server) unless the request says otherwise.
    `host` checks a machine given as an object (e.g. a connected SSHHost) instead of `request.target`.
    `progress` receives the probes done, `step_progress` the benchmark's runs as they end.
    """
    request = request or CheckRequest()
    store = store or Store()
    if host is not None:
        given = _given_host(host, request.target, request.python)
        reference = _reference(request, store, given.name)
        return _check(request, reference, given, retaken_target(reference, None, given.name, local=False), store,
                      (progress, step_progress))
    with host_for(request.target, request.python) as opened:
        reference = _reference(request, store, opened.name)
        live = opened.capabilities.in_process and not opened.capabilities.recorded
        recorded = retaken_target(reference, request.python, opened.name, local=live)
        if live and recorded.python and recorded.python != request.python:
            # The reference's own interpreter: its packages are the ones the reference describes.
            with host_for(request.target, recorded.python) as retaken:
                return _check(request, reference, retaken, recorded, store, (progress, step_progress))
        return _check(request, reference, opened, recorded, store, (progress, step_progress))


def _reference(request: CheckRequest, store: Store, host_name: str) -> Snapshot:
    against = request.against
    return against if isinstance(against, Snapshot) else check_reference(against, store, host_name)


def _check(request: CheckRequest, reference: Snapshot, host: Host, recorded: Target, store: Store,
           reporters: tuple[ProgressCallback | None, StepReporter | None]) -> CheckResult:
    if request.require_trusted:  # the reference only: the fresh side is taken and signed here, by the user
        require_trusted(signers_for({"a": reference}, roles={"a": "the reference"}))
    rules = load_policy(Path(request.policy)) if isinstance(request.policy, (str, Path)) else request.policy
    options = ProbeOptions(bench=bench_rerun(reference, request.rerun_bench, request.bench_runs,
                                             request.bench_max_runs),
                           server_url=recorded.server)
    progress, step_progress = reporters
    prober = Prober.for_user(host, _options_for(host, options), progress=progress, step_progress=step_progress)
    # Take what the reference has (cheap probes only), so nothing reads as "taken on one side only".
    fresh = prober.snapshot(prober.probes(request.probes or probes_to_check(reference), cheap_only=True),
                            label=request.label)
    result = check_against(reference, fresh, rules, request.min_confidence)
    result.explained.signers = signers_of(reference, fresh)
    if request.keep:
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
