"""`check`: the pre-benchmark gate, a fresh snapshot of the target against a baseline under a policy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
from driftcheck.analysis.signers import require_trusted, signers_for, signers_of
from driftcheck.analysis.targets import Target
from driftcheck.api._shared import frozen_tuple, given_host, options_for
from driftcheck.api.references import resolve_snapshot
from driftcheck.baselines.extension import default_max_runs, first_look_runs
from driftcheck.errors import OptionError, UsageError
from driftcheck.hosts import Host
from driftcheck.hosts.child import StepReporter
from driftcheck.hosts.targets import LOCAL, host_for
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.prober import Prober
from driftcheck.probes.runner import ProgressCallback
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store


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
        frozen_tuple(self, "probes")
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
        given = given_host(host, request.target, request.python)
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
    return against if isinstance(against, Snapshot) else check_reference(against, store, host_name, resolve_snapshot)


def _check(request: CheckRequest, reference: Snapshot, host: Host, recorded: Target, store: Store,
           reporters: tuple[ProgressCallback | None, StepReporter | None]) -> CheckResult:
    if request.require_trusted:  # the reference only: the fresh side is taken and signed here, by the user
        require_trusted(signers_for({"a": reference}, roles={"a": "the reference"}))
    rules = load_policy(Path(request.policy)) if isinstance(request.policy, (str, Path)) else request.policy
    options = ProbeOptions(bench=bench_rerun(reference, request.rerun_bench, request.bench_runs,
                                             request.bench_max_runs),
                           server_url=recorded.server)
    progress, step_progress = reporters
    prober = Prober.for_user(host, options_for(host, options), progress=progress, step_progress=step_progress)
    # Take what the reference has (cheap probes only), so nothing reads as "taken on one side only".
    fresh = prober.snapshot(prober.probes(request.probes or probes_to_check(reference), cheap_only=True),
                            label=request.label)
    result = check_against(reference, fresh, rules, request.min_confidence)
    result.explained.signers = signers_of(reference, fresh)
    if request.keep:
        store.add(fresh)
    return result
