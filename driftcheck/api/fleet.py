"""`fleet`: many machines snapshotted at once (over SSH, or every node of a Slurm allocation) and compared
with each other (or with one reference): the peer report; with `bench`, every host also runs the calibrated
suite and is judged by measurement against the others (`driftcheck.analysis.fleet_bench`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftcheck.analysis import signers
from driftcheck.analysis.fleet_bench import FleetBench, judge_fleet
from driftcheck.analysis.peers import PeerReport, peer_report
from driftcheck.analysis.signers import Signers, signers_for
from driftcheck.api.references import resolve_snapshot
from driftcheck.probes.base import BenchRequest
from driftcheck.remote.fleet import (
    DEFAULT_CONCURRENCY,
    DEFAULT_HOST_TIMEOUT_S,
    FleetProgress,
    FleetRequest,
    HostResult,
    snapshot_targets,
)
from driftcheck.remote.fleet_bench import (
    DEFAULT_BENCH_CONCURRENCY,
    DEFAULT_BENCH_RUNS,
    bench_args,
    bench_of_snapshots,
    bench_targets,
    remote_command,
)
from driftcheck.remote.slurm import driftcheck_command as node_command
from driftcheck.remote.slurm import gather
from driftcheck.remote.targets import fleet_hosts
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

__all__ = ["DEFAULT_BENCH_CONCURRENCY", "DEFAULT_BENCH_RUNS", "DEFAULT_CONCURRENCY", "DEFAULT_HOST_TIMEOUT_S",
           "FleetProgress", "FleetResult", "HostResult", "fleet", "remote_driftcheck_command",
           "slurm_driftcheck_command"]


@dataclass
class FleetResult:
    """The peer report of the hosts that gave a snapshot, those snapshots by host, who signed each (and the
    reference), and the hosts that gave none, with why; with `bench`, the fleet judged by measurement."""

    report: PeerReport
    snapshots: dict[str, Snapshot]
    signers: Signers
    failures: dict[str, str]
    bench: FleetBench | None = None

    @property
    def trouble(self) -> bool:
        """Whether a host gave no snapshot, or (measuring) no figures: the fleet was not seen whole."""
        return bool(self.failures) or not self.snapshots or bool(self.bench and self.bench.failures)

    @property
    def uniform(self) -> bool:
        """No configuration outlier, and no host that measured slower or faster than the rest."""
        return self.report.uniform and not (self.bench and self.bench.outliers)

    def to_json(self) -> dict[str, Any]:
        """The fleet as `driftcheck fleet --format json` prints it: the report, each host's snapshot id, the signers,
        and with --bench the measurement (`bench`: per host its figures, verdict and each benchmark's MDS)."""
        document = self.report.to_json()
        document["snapshots"] = {host: self.snapshots[host].id for host in sorted(self.snapshots)}
        document["signers"] = self.signers.to_json()
        if self.bench is not None:
            document["bench"] = self.bench.to_json()
        return document


def slurm_driftcheck_command() -> list[str]:
    """How the nodes of a Slurm allocation start driftcheck unless told otherwise."""
    return node_command()


def remote_driftcheck_command(python: str | None = None) -> list[str]:
    """How a host measures over SSH unless told otherwise: driftcheck as a module of its `python`."""
    return remote_command(python)


def fleet(hosts: Sequence[str] = (), *, hosts_file: Path | None = None, slurm: bool = False,
          driftcheck_command: Sequence[str] | None = None, python: str | None = None, identity: str | None = None,
          accept_new_host_key: bool = False, probes: Sequence[str] = (), skip: Sequence[str] = (),
          against: str | Snapshot | None = None, label: str | None = None, concurrency: int = DEFAULT_CONCURRENCY,
          host_timeout_s: float = DEFAULT_HOST_TIMEOUT_S, keep: bool = True, require_trusted: bool = False,
          progress: FleetProgress | None = None, store: Store | None = None, bench: BenchRequest | None = None,
          bench_concurrency: int = DEFAULT_BENCH_CONCURRENCY,
          bench_progress: FleetProgress | None = None) -> FleetResult:
    """Snapshot every host and compare them: for every fact not identical across them, the majority value (or
    `against`'s: a snapshot or a reference such as `@before-boot`) and the outliers, ranked.

    `hosts`: `[user@]host[:port]`, `~/.ssh/config` aliases, hostlist expressions (`gpu[01-16]`), with more in
    `hosts_file`; with `slurm`, `hosts` are srun's arguments instead and every node of the allocation runs
    `driftcheck_command` (default: this interpreter's driftcheck). A host that fails is kept in `failures`, the
    others compared all the same. `require_trusted` refuses a reference signed by no key the user trusts
    (before any host is contacted) and counts such a Slurm node as failed. `keep=False` stores no snapshot.

    `bench`: every host that gave a snapshot also runs that suite, and each is judged against the others
    (`driftcheck.analysis.fleet_bench`). Over SSH a host runs `driftcheck_command` (default: driftcheck as a
    module of `python`) once every snapshot is taken, `bench_concurrency` hosts at a time, each within
    `host_timeout_s`; a host whose bench fails is kept in the judgement's `failures`. Over Slurm the suite
    runs inside each node's snapshot, every node at once on its own node.
    """
    store = store or Store()
    named = against if isinstance(against, str) and against else None
    reference = resolve_snapshot(named, store) if named else against if isinstance(against, Snapshot) else None
    reference_signers = signers_for({"--against": reference}, roles={"--against": "--against"}) \
        if reference else Signers({})
    if require_trusted:
        signers.require_trusted(reference_signers)
    bench_records: dict[str, dict[str, Any]] = {}
    bench_failures: dict[str, str] = {}
    if slurm:
        snapshots, failures = _slurm_fleet(hosts, driftcheck_command, python, probes, skip, label, host_timeout_s,
                                           require_trusted, bench)
        if bench is not None:
            bench_records, bench_failures = bench_of_snapshots(snapshots)
    else:
        request = FleetRequest(tuple(fleet_hosts(hosts, hosts_file)), python=python, identity=identity,
                               accept_new_host_key=accept_new_host_key, probes=tuple(probes), skip=tuple(skip),
                               label=label, concurrency=concurrency, host_timeout_s=host_timeout_s)
        results = snapshot_targets(request, progress)
        snapshots = {h: r.snapshot for h, r in results.items() if r.snapshot is not None}
        failures = {h: r.error or "no snapshot" for h, r in results.items() if r.snapshot is None}
        if bench is not None:
            # After every snapshot: a snapshot's reads would disturb a benchmark as much as another benchmark.
            measured = bench_targets(request, [h for h in request.hosts if h in snapshots], bench,
                                     list(driftcheck_command or remote_command(python)), bench_concurrency,
                                     bench_progress)
            bench_records = {h: o.record for h, o in measured.items() if o.record is not None}
            bench_failures = {h: o.error or "no figures" for h, o in measured.items() if o.record is None}
    # Every host by name, the reference under its flag: who signed what the report compares.
    who_signed = Signers({**reference_signers.sides, **signers_for(snapshots, roles={h: h for h in snapshots}).sides})
    if keep:
        for snapshot in snapshots.values():
            store.add(snapshot)
    compared_with = named or (reference.short_id if reference else "majority")
    judged = judge_fleet(bench_records, bench_failures) if bench is not None else None
    return FleetResult(peer_report(snapshots, reference, compared_with, failures), snapshots, who_signed, failures,
                       judged)


def _slurm_fleet(srun_args: Sequence[str], command: Sequence[str] | None, python: str | None,
                 probes: Sequence[str], skip: Sequence[str], label: str | None, timeout_s: float,
                 require_trusted: bool, bench: BenchRequest | None) -> tuple[dict[str, Snapshot], dict[str, str]]:
    snapshot_args: list[str] = []
    for name in probes:
        snapshot_args += ["--probe", name]
    if bench is not None:
        # In the node's own snapshot, after its other probes: each node measures alone on its own machine.
        snapshot_args += bench_args(bench)
    for name in skip:
        snapshot_args += ["--skip", name]
    if python:
        snapshot_args += ["--python", python]
    if label:
        snapshot_args += ["--label", label]
    gathered = gather(srun_args, list(command or node_command()), snapshot_args, timeout_s,
                      require_trusted=require_trusted)
    return gathered.snapshots, gathered.failures
