"""`export_prometheus`, `serve_prometheus`, `export_nfd`: this machine's state and its check's verdict where
operators already look: node_exporter's textfile collector, a Prometheus scrape, node-feature-discovery labels.

Each export takes a fresh snapshot of this machine (the cheap probes, kept out of the store: the scheduled
snapshots are the record) and checks it against the reference `check` would use; with none (no baseline
`default`, no earlier snapshot of this host) it exports the snapshot's facts alone and says why. A benchmark
the reference holds is not rerun: an export is periodic and must stay cheap (`driftcheck check` reruns it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.metrics_core import Metric

from driftcheck.analysis.drift_summary import drift_verdict, reference_name
from driftcheck.api.check import CheckRequest, check, check_reference
from driftcheck.api.snapshot import SnapshotRequest, take_snapshot
from driftcheck.errors import OptionError, UsageError
from driftcheck.hosts.targets import LOCAL, host_for
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.reports.env_digest import family_digests
from driftcheck.reports.nfd import node_features, write_feature_file
from driftcheck.reports.prometheus import HeldMetrics, MetricsEndpoint, all_metrics, exposition, write_textfile
from driftcheck.snapshot.keys import load_redaction_secret
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class ExportRequest:
    """`against`: the reference to check with (default: as `check`); `policy`: a policy YAML file;
    `check=False` exports the snapshot's facts without a check."""

    against: str | None = None
    policy: str | Path | None = None
    check: bool = True

    def __post_init__(self) -> None:
        if self.against is not None and not self.check:
            raise OptionError("against", self.against, "names a reference for a check that check=False skips")
        if self.policy is not None and not self.check:
            raise OptionError("policy", str(self.policy), "is a policy for a check that check=False skips")


@dataclass(frozen=True)
class MachineState:
    """What one export says: the fresh snapshot, the check's verdict (None without a check) and, when no check
    ran although one was asked, why."""

    snapshot: Snapshot
    verdict: DriftVerdict | None
    note: str | None = None


@dataclass(frozen=True)
class PrometheusExport:
    """A written textfile: where, its size, how many series it holds, and the state it describes."""

    path: Path
    size_bytes: int
    series: int
    state: MachineState


def machine_state(request: ExportRequest | None = None, *, store: Store | None = None) -> MachineState:
    """A fresh snapshot of this machine and, as the request says, its check against the reference."""
    request = request or ExportRequest()
    store = store or Store()
    label = "driftcheck export"
    if request.check:
        with host_for(LOCAL) as host:
            host_name = host.name
        try:
            reference = check_reference(request.against, store, host_name)
        except UsageError as exc:
            if request.against is not None:
                raise
            snapshot = take_snapshot(SnapshotRequest(label=label, cheap_only=True, keep=False), store=store)
            return MachineState(snapshot, None, f"no check: {exc}")
        result = check(CheckRequest(against=reference, policy=request.policy, rerun_bench=False, keep=False,
                                    label=label), store=store)
        return MachineState(result.fresh, drift_verdict(result, reference_name(request.against, result, store)))
    return MachineState(take_snapshot(SnapshotRequest(label=label, cheap_only=True, keep=False), store=store), None)


def prometheus_metrics(state: MachineState) -> list[Metric]:
    """The metric families of `state` (environment families as digests keyed with the user's secret)."""
    return all_metrics(state.snapshot, state.verdict, family_digests(state.snapshot, load_redaction_secret()))


def series_count(families: list[Metric]) -> int:
    """How many series (samples) the families hold."""
    return sum(len(family.samples) for family in families)


def export_prometheus(textfile_dir: Path, request: ExportRequest | None = None, *,
                      store: Store | None = None) -> PrometheusExport:
    """Write `textfile_dir/driftcheck.prom` for node_exporter's textfile collector, atomically."""
    state = machine_state(request, store=store)
    families = prometheus_metrics(state)
    path = write_textfile(textfile_dir, families)
    return PrometheusExport(path, len(exposition(families)), series_count(families), state)


class PrometheusServer:
    """Metrics served over HTTP for a direct scrape, refreshed on `refresh()` (each one a new check)."""

    def __init__(self, host: str, port: int, request: ExportRequest | None = None, *,
                 store: Store | None = None) -> None:
        self._request, self._store = request, store
        self.state = machine_state(request, store=store)
        self._held = HeldMetrics(prometheus_metrics(self.state))
        self._endpoint = MetricsEndpoint(host, port, self._held)
        self.host = host

    @property
    def port(self) -> int:
        """The port it serves on."""
        return self._endpoint.port

    def refresh(self) -> MachineState:
        """Take a fresh snapshot and check, and serve its metrics from now on."""
        self.state = machine_state(self._request, store=self._store)
        self._held.replace(prometheus_metrics(self.state))
        return self.state

    def serve(self, every_s: float, stop: threading.Event) -> None:
        """Refresh every `every_s` seconds until `stop` is set."""
        while not stop.wait(every_s):
            self.refresh()

    def close(self) -> None:
        """Stop serving."""
        self._endpoint.close()


@dataclass(frozen=True)
class NfdExport:
    """A written feature file: where, its labels, and the state it describes."""

    path: Path
    features: dict[str, str]
    state: MachineState


def export_nfd(features_dir: Path, request: ExportRequest | None = None, *, store: Store | None = None) -> NfdExport:
    """Write node-feature-discovery's feature file `features_dir/driftcheck`, atomically."""
    state = machine_state(request, store=store)
    features = node_features(state.snapshot, state.verdict)
    return NfdExport(write_feature_file(features_dir, features), features, state)
