"""The calibrated suite run on every host of a fleet (`driftcheck fleet --bench`), a bounded number at a time.

The benchmarks need torch and driftcheck's own workloads, which a snapshot over SSH does not (it reads files
and runs commands): so, as a Slurm node does, each host runs driftcheck itself, `DRIFTCHECK snapshot --probe
bench --bench SUITE --runs N -o - --no-store --quiet --no-sign`, and prints a snapshot holding only the `bench`
probe, read back here. It is not signed: nothing of it is kept, its figures only feed the fleet's verdicts,
and they arrive over the SSH session this process opened (its host key checked), so no key is made on the
hosts for it. Over Slurm the suite travels inside each node's (signed) snapshot instead (`slurm_bench_args`).

Benchmarks on shared hardware disturb each other (a socket's memory bandwidth, a VM host's cores, a shared
file system's pages), so hosts measure `concurrency` at a time, one by default, after every snapshot is taken,
in rounds of one run each (`bench_targets`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from driftcheck.baselines.record import BenchRecord
from driftcheck.baselines.repeated import merge_records
from driftcheck.errors import DriftcheckError, HostError
from driftcheck.hosts.targets import host_for
from driftcheck.probes.base import BenchRequest
from driftcheck.remote.fleet import FleetProgress, FleetRequest, HostResult, TakeOne, snapshot_fleet
from driftcheck.snapshot.model import Snapshot, parse_snapshot

# One host at a time: benchmarks of hosts that share hardware would measure each other.
DEFAULT_BENCH_CONCURRENCY = 1
# Runs on each host: the fewest whose spread a verdict can measure (one run leaves it assumed).
DEFAULT_BENCH_RUNS = 3
# The most of a host's error output a failure quotes: its last line says why.
_LAST_LINES = 1


@dataclass(frozen=True)
class BenchOutcome:
    """One host's `bench` probe data, or why there is none."""

    host: str
    record: dict[str, Any] | None
    error: str | None
    duration_s: float


def bench_args(request: BenchRequest) -> list[str]:
    """The `driftcheck snapshot` arguments that run `request`'s suite into the snapshot's `bench` probe."""
    args = ["--bench", request.suite, "--runs", str(request.runs)]
    if request.budget_s is not None:
        args += ["--budget-s", f"{request.budget_s:g}"]
    return args


def bench_argv(command: Sequence[str], request: BenchRequest) -> list[str]:
    """What a host runs: driftcheck (`command`), a snapshot of the `bench` probe alone, printed on stdout."""
    return [*command, "snapshot", "--probe", "bench", *bench_args(request), "-o", "-", "--no-store", "--quiet",
            "--no-sign"]


def remote_command(python: str | None) -> list[str]:
    """How a host starts driftcheck unless told otherwise: as a module of the interpreter whose packages matter
    there (`--python`, default python3), which is the one whose torch the benchmarks should measure."""
    return [python or "python3", "-m", "driftcheck"]


def bench_record(snapshot: Snapshot) -> dict[str, Any]:
    """The `bench` probe data of a host's snapshot; HostError with the probe's own reason when it has none."""
    entry = snapshot.probes.get("bench")
    if not isinstance(entry, Mapping):
        raise HostError("its snapshot holds no bench probe")
    data = entry.get("data")
    if entry.get("status") != "ok" or not isinstance(data, Mapping):
        raise HostError(f"bench {entry.get('status')}: {entry.get('error') or 'no figures'}")
    return dict(data)


def _output_snapshot(stdout: str, stderr: str, returncode: int, source: str) -> Snapshot:
    if not stdout.strip():
        last = [line for line in stderr.splitlines() if line.strip()][-_LAST_LINES:]
        raise HostError(f"driftcheck exited {returncode} without a snapshot" + (f": {last[0]}" if last else ""))
    return parse_snapshot(stdout, source)


def bench_taker(request: FleetRequest, bench: BenchRequest, command: Sequence[str], timeout_s: float) -> TakeOne:
    """A `take` that runs the suite on one target of `request` through driftcheck there and returns what it
    printed (a snapshot of the bench probe alone)."""
    argv = bench_argv(command, bench)

    def take(name: str) -> Snapshot:
        with host_for(name, request.python, identity=request.identity,
                      accept_new_host_key=request.accept_new_host_key) as target:
            done = target.run(argv, timeout_s=timeout_s)
        return _output_snapshot(done.stdout, done.stderr, done.returncode, f"bench on {name}")

    return take


def _outcome(result: HostResult) -> BenchOutcome:
    if result.snapshot is None:
        return BenchOutcome(result.host, None, result.error or "no figures", result.duration_s)
    try:
        return BenchOutcome(result.host, bench_record(result.snapshot), None, result.duration_s)
    except DriftcheckError as exc:
        return BenchOutcome(result.host, None, str(exc), result.duration_s)


def bench_targets(request: FleetRequest, hosts: Sequence[str], bench: BenchRequest, command: Sequence[str],
                  concurrency: int = DEFAULT_BENCH_CONCURRENCY,
                  progress: FleetProgress | None = None) -> dict[str, BenchOutcome]:
    """The suite on every one of `hosts` (targets of `request`), at most `concurrency` at a time, each within
    the request's per-host limit; host → its bench data (all its runs) or why there is none.

    The runs are taken in rounds, one run of every host a round, the order turned by one host each round: load
    that comes and goes (on the machines, or on one they share) then falls on every host's runs alike, instead
    of on whichever host was measuring all its runs at that moment, which would single it out. A host whose run
    fails is not asked again."""
    if not hosts:
        return {}
    take = bench_taker(request, replace(bench, runs=1, max_runs=None), command, request.host_timeout_s)
    records: dict[str, list[BenchRecord]] = {host: [] for host in hosts}
    errors: dict[str, str] = {}
    seconds = dict.fromkeys(hosts, 0.0)
    for round_index in range(bench.runs):
        turn = round_index % len(hosts)
        order = [host for host in [*hosts[turn:], *hosts[:turn]] if host not in errors]
        for host, result in snapshot_fleet(order, take, concurrency, request.host_timeout_s, progress).items():
            outcome = _outcome(result)
            seconds[host] += outcome.duration_s
            if outcome.record is None:
                errors[host] = outcome.error or "no figures"
            else:
                records[host].append(cast(BenchRecord, outcome.record))
    return {host: BenchOutcome(host, None, errors[host], seconds[host]) if host in errors
            else BenchOutcome(host, dict(merge_records(records[host])), None, seconds[host]) for host in hosts}


def bench_of_snapshots(snapshots: Mapping[str, Snapshot]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Each snapshot's bench data (a Slurm node's, taken with its snapshot), and the nodes whose bench failed."""
    records: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    for host, snapshot in snapshots.items():
        try:
            records[host] = bench_record(snapshot)
        except DriftcheckError as exc:
            failures[host] = str(exc)
    return records, failures
