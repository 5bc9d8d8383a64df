"""A snapshot and a check's verdict as Prometheus metrics, written by `prometheus_client`.

Every metric is prefixed `driftcheck_`, in base units (seconds, hertz, watts), with bounded label sets: one
series per probe, per GPU, per catalog package, per env family, per cause category. Never a file hash, an
environment value or the whole package list: the packages are the speed-deciding ones of the catalog
(snapshot/catalog.yaml), an environment family is a keyed digest (`reports/env_digest.py`).

Where the metrics go: a file in node_exporter's textfile-collector directory (`write_textfile`: a temporary
file renamed over `driftcheck.prom`, so the collector never reads half a file), or an HTTP endpoint
(`MetricsEndpoint`) for those who scrape directly.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, generate_latest, start_http_server, write_to_textfile
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from driftcheck.errors import DriftcheckError
from driftcheck.probes.packages import normalize_name
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.version import VERSION
from driftcheck.snapshot.vocabulary import CATEGORIES

TEXTFILE_NAME = "driftcheck.prom"
MHZ = 1_000_000
# The clocks a GPU record holds in MHz (nvidia/values.py), by what they are: limits and settings, never the
# current clocks, which are readings that move on their own.
_CLOCK_SETS = (("application_clocks", "application"), ("max_clocks", "max"))


def _gauge(name: str, documentation: str, labels: Iterable[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"driftcheck_{name}", documentation, labels=list(labels))


def unix_seconds(timestamp: str) -> float:
    """An ISO-8601 UTC timestamp of a snapshot (`...Z`) in Unix seconds."""
    parsed = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).timestamp()


def _number(value: JSONValue) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: JSONValue) -> str:
    return "" if value is None else str(value)


def snapshot_metrics(snapshot: Snapshot) -> list[Metric]:
    """What the snapshot says: driftcheck's build, when it was taken, which probes worked."""
    build = _gauge("build_info", "driftcheck's version (value 1)", ["version"])
    build.add_metric([VERSION], 1)
    taken = _gauge("snapshot_timestamp_seconds", "when the snapshot these metrics describe was taken")
    taken.add_metric([], unix_seconds(snapshot.created_at))
    probes = _gauge("probe_success", "1 when the probe gathered its facts, 0 when it did not (any other outcome)",
                    ["probe"])
    for name, outcome in sorted(snapshot.probes.items()):
        probes.add_metric([name], 1 if outcome.get("status") == "ok" else 0)
    return [build, taken, probes]


def check_metrics(verdict: DriftVerdict) -> list[Metric]:
    """The check's verdict: drift 0/1, the causes per category (every category, 0 where none), when."""
    drift = _gauge("check_drift", "1 when the last check found drift against the reference, else 0", ["reference"])
    drift.add_metric([verdict.reference], 1 if verdict.drift else 0)
    causes = _gauge("check_causes", "causes of the last check confident enough to count, by category",
                    ["reference", "category"])
    for category in sorted({*CATEGORIES, *verdict.causes}):
        causes.add_metric([verdict.reference, category], verdict.causes.get(category, 0))
    when = _gauge("check_timestamp_seconds", "when the last check ran", ["reference"])
    when.add_metric([verdict.reference], verdict.checked_at)
    return [drift, causes, when]


def package_metrics(snapshot: Snapshot) -> list[Metric]:
    """The speed-deciding packages of the catalog that are installed: version and build digest."""
    info = _gauge("package_info", "a speed-deciding package (snapshot/catalog.yaml) that is installed (value 1)",
                  ["package", "version", "build"])
    packages = object_or_empty((snapshot.probe_data("packages") or {}).get("packages"))
    groups = name_catalog().groups
    for name, record in sorted(packages.items()):
        normalized = normalize_name(name)
        if any(group.matches(normalized) for group in groups):
            info.add_metric([normalized, _text(value_at(record, "version")), _text(value_at(record, "build_id"))], 1)
    return [info]


def _gpus(snapshot: Snapshot) -> list[JSONObject]:
    gpus = object_or_empty((snapshot.probe_data("gpu") or {}).get("gpus"))
    records = [record for record in gpus.values() if isinstance(record, dict)]
    return sorted(records, key=lambda record: (_number(record.get("index")) or 0, _text(record.get("uuid"))))


def gpu_metrics(snapshot: Snapshot) -> list[Metric]:
    """Per GPU: its identity and driver, and the settings that decide its speed (clocks, power, PCIe link)."""
    gpu_data = snapshot.probe_data("gpu") or {}
    driver = _text(gpu_data.get("driver_version"))
    links = object_or_empty((snapshot.probe_data("pcie") or {}).get("gpus"))
    info = _gauge("gpu_info", "a GPU and its driver (value 1)", ["gpu", "uuid", "name", "driver_version",
                                                                 "vbios_version"])
    clocks = _gauge("gpu_clock_hertz", "a GPU's application clock (the one it runs at) or its max clock",
                    ["gpu", "uuid", "clock", "kind"])
    power = _gauge("gpu_power_limit_watts", "a GPU's power limit", ["gpu", "uuid"])
    persistence = _gauge("gpu_persistence_mode", "1 when persistence mode is on", ["gpu", "uuid"])
    link_gen = _gauge("gpu_pcie_link_generation", "a GPU's PCIe link generation, current and max",
                      ["gpu", "uuid", "kind"])
    link_width = _gauge("gpu_pcie_link_width_lanes", "a GPU's PCIe link width, current and max",
                        ["gpu", "uuid", "kind"])
    for record in _gpus(snapshot):
        gpu, uuid = _text(record.get("index")), _text(record.get("uuid"))
        info.add_metric([gpu, uuid, _text(record.get("name")), driver, _text(record.get("vbios_version"))], 1)
        for member, kind in _CLOCK_SETS:
            for clock, mhz in sorted(object_or_empty(record.get(member)).items()):
                value = _number(mhz)
                if value is not None:
                    clocks.add_metric([gpu, uuid, clock.removesuffix("_mhz"), kind], value * MHZ)
        _add(power, [gpu, uuid], value_at(record, "power", "limit_w"))
        mode = record.get("persistence_mode")
        if isinstance(mode, bool):
            persistence.add_metric([gpu, uuid], 1 if mode else 0)
        link = object_or_empty(value_at(links.get(uuid), "link"))
        for kind in ("current", "max"):
            _add(link_gen, [gpu, uuid, kind], link.get(f"gen_{kind}"))
            _add(link_width, [gpu, uuid, kind], link.get(f"width_{kind}"))
    return [info, clocks, power, persistence, link_gen, link_width]


def _add(family: GaugeMetricFamily, labels: list[str], value: JSONValue) -> None:
    number = _number(value)
    if number is not None:
        family.add_metric(labels, number)


def env_metrics(digests: Mapping[str, str]) -> list[Metric]:
    """One series per env family that has a variable set: its keyed digest, never a value."""
    info = _gauge("env_info", "an environment variable family and a keyed digest of its settings (value 1)",
                  ["family", "digest"])
    for family, digest in sorted(digests.items()):
        info.add_metric([family, digest], 1)
    return [info]


def server_metrics(snapshot: Snapshot) -> list[Metric]:
    """The inference engine the snapshot's server probe asked, and its version, when it asked one."""
    info = _gauge("server_info", "the inference server's engine and version (value 1)", ["engine", "version"])
    server = snapshot.probe_data("server")
    if server and server.get("engine"):
        info.add_metric([_text(server.get("engine")), _text(server.get("version"))], 1)
    return [info]


def all_metrics(snapshot: Snapshot, verdict: DriftVerdict | None, env_digests: Mapping[str, str]) -> list[Metric]:
    """Every metric of one export: the snapshot's, and the check's when there was one."""
    families = snapshot_metrics(snapshot) + (check_metrics(verdict) if verdict else [])
    return families + package_metrics(snapshot) + gpu_metrics(snapshot) + env_metrics(env_digests) \
        + server_metrics(snapshot)


class HeldMetrics(Collector):
    """The metric families of the last export; `replace` swaps them whole, so a scrape sees one export."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = list(families)
        self._lock = threading.Lock()

    def replace(self, families: list[Metric]) -> None:
        """Serve `families` from now on."""
        with self._lock:
            self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        """The families of the last export (what a scrape or a textfile holds)."""
        with self._lock:
            families = list(self._families)
        yield from families


def registry_of(collector: Collector) -> CollectorRegistry:
    """A registry of its own holding only `collector` (never the process-wide default with its own metrics)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def exposition(families: list[Metric]) -> bytes:
    """The families in the Prometheus text format (version 0.0.4), as a textfile holds them."""
    return generate_latest(registry_of(HeldMetrics(families)))


def write_textfile(directory: Path, families: list[Metric]) -> Path:
    """Write `directory/driftcheck.prom` whole or not at all (prometheus_client writes a temporary file beside it
    and renames it over the old one); returns its path."""
    if not directory.is_dir():
        raise DriftcheckError(f"--textfile-dir {directory}: no such directory (node_exporter's "
                              "--collector.textfile.directory)")
    path = directory / TEXTFILE_NAME
    try:
        write_to_textfile(str(path), registry_of(HeldMetrics(families)))
    except OSError as exc:
        raise DriftcheckError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


class MetricsEndpoint:
    """An HTTP endpoint serving the held metrics at any path (`/metrics` as Prometheus asks)."""

    def __init__(self, host: str, port: int, held: HeldMetrics) -> None:
        try:
            self._server, self._thread = start_http_server(port, host, registry=registry_of(held))
        except OSError as exc:
            raise DriftcheckError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None

    @property
    def port(self) -> int:
        """The port it listens on (the one the system chose when 0 was asked)."""
        server: WSGIServer = self._server
        return int(server.server_address[1])

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
