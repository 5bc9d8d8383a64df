"""`check`: the pre-benchmark gate, a fresh snapshot of the target against a baseline under a policy.

The orchestration lives here: which reference (the store, named baselines), which probes to retake, the
taking, and more benchmark runs where the first look cannot decide; the verdict itself is a function of the
two snapshots (`driftcheck.analysis.gate`)."""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from driftcheck.analysis.gate import DEFAULT_MIN_CONFIDENCE, CheckResult, check_against, check_min_confidence
from driftcheck.analysis.more_runs import first_look_runs
from driftcheck.analysis.policy import Policy, PolicyError, parse_policy
from driftcheck.analysis.signers import require_trusted, signers_for, signers_of
from driftcheck.analysis.targets import Target, reference_target
from driftcheck.api._shared import checked_local_log, frozen_tuple, given_host, options_for
from driftcheck.api.bench import decided_record
from driftcheck.api.references import resolve_snapshot
from driftcheck.api.sessions import keep_passed_check, session_key, with_between
from driftcheck.baselines.record import BenchRecord, as_bench_record
from driftcheck.errors import OptionError, UnknownSnapshotError, UsageError
from driftcheck.hosts import Host
from driftcheck.hosts.child import StepReporter
from driftcheck.hosts.targets import LOCAL, host_for
from driftcheck.probes import probe_class
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.prober import Prober
from driftcheck.probes.runner import ProgressCallback, run_probes
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.signing import sign_document
from driftcheck.stats.looks import default_max_runs
from driftcheck.store.named import NamedSnapshots
from driftcheck.store.snapshots import Store


def check_reference(against: str | None, store: Store, host_name: str) -> Snapshot:
    """What `driftcheck check` compares with: `against` (a baseline name or any snapshot reference), else
    baseline `default`, else the newest snapshot probed on this host (never an import or a replay)."""
    named = NamedSnapshots(store)
    names = [b.name for b in named.entries()]
    if against:
        if against in names:
            return named.snapshot(against)
        try:
            return resolve_snapshot(against, store)
        except UnknownSnapshotError as exc:
            known = f"baselines: {', '.join(names)}" if names else "no baselines saved yet"
            raise UnknownSnapshotError(against, f"no such baseline, and {exc.reason} ({known})") from None
    if "default" in names:
        return named.snapshot("default")
    for entry in store.entries():
        if entry.host != host_name:
            continue
        snapshot = resolve_snapshot(entry.id, store)
        if snapshot.document.get("origin") == "probed":
            return snapshot
    raise UsageError(f"nothing to check against: no baseline `default` and no snapshot probed on {host_name}; "
                     "run `driftcheck baseline save default` first")


def probes_to_check(reference: Snapshot, options: ProbeOptions | None = None) -> list[str]:
    """The cheap built-in probes that `reference` holds: what a fresh check must take to compare with it.
    A cheap probe taken only on request is retaken when the check's `options` ask for it (default: what the
    reference recorded asking, e.g. the server it measured; `retaken_target` gives its URL)."""
    if options is None:
        recorded = reference_target(reference)
        options = ProbeOptions(server_url=recorded.server, server_log=recorded.server_log)
    names = []
    for name in reference.document["probes"]:
        cls = probe_class(name)
        if cls is not None and cls.cheap and (not cls.on_request or cls.requested(options)):
            names.append(name)
    return names


def _runnable_here(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def retaken_target(reference: Snapshot, python: str | None, host_name: str, local: bool = True) -> Target:
    """What a check of `reference` probes: the interpreter the user named, else the one the reference
    recorded when it was taken on this host (`host_name`) and still runs here, else None (our own; the
    difference then leads the report); the server URL the reference asked. `local`: this machine is probed
    (on another host the reference's path cannot be checked from here, and is used as recorded)."""
    recorded = reference_target(reference)
    if python is None and recorded.python and recorded.host == host_name \
            and (not local or _runnable_here(recorded.python)):
        python = recorded.python
    return Target(python=python, host=host_name, server=recorded.server, bench_suite=recorded.bench_suite,
                  bench_runs=recorded.bench_runs, server_log=recorded.server_log)



def load_policy(path: Path) -> Policy:
    """Read a policy file; PolicyError (one line) when it is missing or malformed."""
    try:
        document = yaml.safe_load(path.read_text("utf-8"))
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: not a YAML text file (not UTF-8)") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return parse_policy(document, str(path))


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
    by no key the user trusts, before anything is taken. `server`: the URL of the running engine to check
    (default: the one the reference asked); `server_log`: the engine's log to read its start's settings from
    (default: the one the reference read); `processes`: regexes of running processes (the engine's own
    environment and libraries) to take again.
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
    server: str | None = None
    processes: Sequence[str] = ()
    server_log: str | None = None

    def __post_init__(self) -> None:
        frozen_tuple(self, "probes")
        frozen_tuple(self, "processes")
        # an OptionError names the bad one
        ProbeOptions(server_url=self.server, process_patterns=tuple(self.processes), server_log=self.server_log)
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
    reference get more, up to `max_runs` in all (default: twice the runs; equal to them: never more), which
    the check asks for itself (`decided_bench`).
    `rerun=True` makes a reference without results an error."""
    if rerun is False:
        return None
    recorded = as_bench_record(reference.probe_data("bench"))
    if recorded is None or not recorded.get("results") or not recorded.get("suite"):
        if rerun:
            raise UsageError(f"the reference {reference.short_id} holds no benchmark results to rerun; "
                             "save one with `driftcheck baseline save NAME --bench quick`")
        return None
    budget = recorded.get("budget_s")
    runs = runs or first_look_runs(recorded)
    # BenchRequest refuses a max_runs under the runs.
    return BenchRequest(str(recorded.get("suite")), runs, float(budget) if isinstance(budget, (int, float)) else None,
                        max_runs if max_runs is not None else default_max_runs(runs))


def check(request: CheckRequest | None = None, /, *, against: str | Snapshot | None = None,
          policy: Policy | str | Path | None = None, probes: Sequence[str] = (), target: str = LOCAL,
          python: str | None = None, min_confidence: float = DEFAULT_MIN_CONFIDENCE, label: str = "driftcheck check",
          rerun_bench: bool | None = None, bench_runs: int | None = None, bench_max_runs: int | None = None,
          keep: bool = True, require_trusted: bool = False, server: str | None = None,
          processes: Sequence[str] = (), server_log: str | None = None, host: Host | None = None,
          store: Store | None = None, progress: ProgressCallback | None = None,
          step_progress: StepReporter | None = None) -> CheckResult:
    """The pre-benchmark gate: a fresh snapshot (cheap probes) of the target compared with `against`, under
    `policy`: `driftcheck.check(against="baseline:default", policy="gate.yaml")`. `result.drift` is the
    verdict; a benchmark rerun that is `slower` or `faster` beyond its minimum detectable shift is drift too.
    The options are those of `CheckRequest` (its docstring says each), checked the same way; a request built
    beforehand may be given instead of them, not beside them.

    The fresh snapshot describes what the reference recorded about its target (its interpreter, when it was
    taken on this machine and the request names none; its server) unless the request says otherwise.
    `host` checks a machine given as an object (e.g. a connected SSHHost) instead of `target`.
    `progress` receives the probes done, `step_progress` the benchmark's runs as they end.
    """
    asked = CheckRequest(against=against, policy=policy, probes=probes, target=target, python=python,
                         min_confidence=min_confidence, label=label, rerun_bench=rerun_bench, bench_runs=bench_runs,
                         bench_max_runs=bench_max_runs, keep=keep, require_trusted=require_trusted, server=server,
                         processes=processes, server_log=server_log)
    if request is not None and asked != CheckRequest():
        raise OptionError("request", None, "give a CheckRequest or its options as keywords, not both")
    request = request or asked
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
    return against if isinstance(against, Snapshot) else check_reference(against, store, host_name)


def _check(request: CheckRequest, reference: Snapshot, host: Host, recorded: Target, store: Store,
           reporters: tuple[ProgressCallback | None, StepReporter | None]) -> CheckResult:
    if request.require_trusted:  # the reference only: the fresh side is taken and signed here, by the user
        require_trusted(signers_for({"a": reference}, roles={"a": "the reference"}))
    rules = load_policy(Path(request.policy)) if isinstance(request.policy, (str, Path)) else request.policy
    # A running engine is checked like the machine: the server it answers at (`server`, else the reference's)
    # and the processes named (`processes`: their own environment and mapped libraries) are taken again.
    # The log the user named is refused now when this machine cannot read it; the reference's is the probe's to
    # report.
    named_log = checked_local_log(request.server_log) \
        if host.capabilities.in_process and not host.capabilities.recorded else request.server_log
    options = ProbeOptions(bench=bench_rerun(reference, request.rerun_bench, request.bench_runs,
                                             request.bench_max_runs),
                           server_url=request.server or recorded.server, process_patterns=tuple(request.processes),
                           server_log=named_log or recorded.server_log)
    progress, step_progress = reporters
    prober = Prober.for_user(host, options_for(host, options), progress=progress, step_progress=step_progress)
    # Take what the reference has (cheap probes only), so nothing reads as "taken on one side only".
    fresh = prober.snapshot(prober.probes(request.probes or probes_to_check(reference, options), cheap_only=True),
                            label=request.label)
    # The host's between-session spreads so far travel in the record they judge: its first look is judged with
    # them, and so is the pair whenever it is compared again.
    key = session_key(as_bench_record(fresh.probe_data("bench")), fresh.host_name)
    fresh = decided_bench(with_between(fresh, store, key, prober.key), reference, prober)
    result = check_against(reference, fresh, rules, request.min_confidence)
    result.explained.signers = signers_of(reference, fresh)
    if request.keep:
        store.add(fresh)
        if not result.drift:
            # Nothing changed that the check could see: both records are sessions of one unchanged state.
            keep_passed_check(store, reference, fresh)
    return result


class _RunsFailed(Exception):
    """The bench probe's outcome when the runs a check asked for to decide did not succeed."""

    def __init__(self, outcome: JSONObject) -> None:
        super().__init__(str(outcome.get("error")))
        self.outcome = outcome


def decided_bench(fresh: Snapshot, reference: Snapshot, prober: Prober) -> Snapshot:
    """`fresh`, with more benchmark runs where its first look leaves a benchmark undecided against `reference`
    (up to the `max_runs` its request allows), taken by the bench probe and joined to the first look; re-signed.
    `fresh` itself when nothing is undecided, or it holds no benchmark results. When those runs fail, the
    benchmark outcome is their failure, as it is when a probe fails."""
    asked, first = prober.options.bench, as_bench_record(fresh.probe_data("bench"))
    if asked is None or first is None or not first.get("results"):
        return fresh
    took: list[float] = []

    def take_more(count: int, taken: int) -> BenchRecord:
        more = replace(asked, runs=count, max_runs=None, taken_before=taken)
        again = replace(prober, options=replace(prober.options, bench=more))
        outcome = run_probes(prober.host, again.probes(["bench"]), again.options)["bench"]
        # An ok outcome holds results (the probe's parse refuses output without them).
        more_record = as_bench_record(outcome.data) if outcome.status == "ok" else None
        if more_record is None:
            raise _RunsFailed(outcome.to_json())
        took.append(round(outcome.duration_s, 4))
        return more_record

    document = copy.deepcopy(fresh.document)
    bench = document["probes"]["bench"]
    try:
        data = decided_record(first, take_more, asked.runs, asked.max_runs or asked.runs,
                              as_bench_record(reference.probe_data("bench")), prober.step_progress)
    except _RunsFailed as failed:
        document["probes"]["bench"] = failed.outcome
    else:
        if not took:
            return fresh
        bench.update(data=data, duration_s=round(float(bench.get("duration_s") or 0.0) + took[0], 4))
    if prober.key is not None:
        document = sign_document(document, prober.key)
    return Snapshot(document, fresh.source)
