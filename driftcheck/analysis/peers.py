"""The peer report: for every fact not identical across a fleet, the majority value and the outliers.

Each host is compared with a reference: by default the fleet's own consensus (for every fact, the
value most hosts hold), or one baseline snapshot. The comparison is the ordinary snapshot diff, and
each outlier gets the explain engine's cause and fix measured against a host that holds the
reference value (`explain.fix_for`), so "node-07: GPU 3 PCIe x8 where 15 of 16 nodes have x16" carries
the same category, confidence and fix as a before/after diff would. Facts that identify a machine
rather than describe its state (GPU UUIDs and serials, a value no two hosts share) are set aside.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from driftcheck.analysis.diff import Change, diff_snapshots
from driftcheck.analysis.explain import Explanation, fix_for, show_value
from driftcheck.analysis.explain.lookup import lookup
from driftcheck.analysis.rules import Catalog, default_catalog
from driftcheck.probes.kernels import is_kernel_package
from driftcheck.probes.packages import normalize_name
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.paths import format_path, leaves

# Probes whose GPUs are keyed by UUID: re-keyed by index, so GPU 3 of one node meets GPU 3 of another.
_GPU_PROBES = ("gpu", "pcie")
# Per-GPU facts that name the board, not its state: they differ between any two machines.
_GPU_IDENTITY = ("uuid", "serial", "pci_bus_id")
_ABSENT = "\0absent"


@dataclass(frozen=True)
class Outlier:
    """One host whose value of a fact differs from the reference's."""

    host: str
    value: Any
    present: bool
    cause: str | None = None
    confidence: float = 0.0
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "value": self.value, "present": self.present, "cause": self.cause,
                "confidence": self.confidence, "fix": self.fix}


@dataclass
class Finding:
    """A fact that is not identical across the fleet (with the facts that differ with it, for one cause)."""

    path: str
    category: str
    reference: Any
    reference_present: bool
    holders: int
    outliers: list[Outlier] = field(default_factory=list)
    also: list[str] = field(default_factory=list)
    # 1 when the fact is a package whose builds decide inference speed (torch, NCCL, flashinfer, ...).
    relevance: int = 0

    @property
    def confidence(self) -> float:
        return max((o.confidence for o in self.outliers), default=0.0)

    def to_json(self, total: int) -> dict[str, Any]:
        return {"path": self.path, "evidence": [self.path, *self.also], "category": self.category,
                "confidence": self.confidence, "performance_package": bool(self.relevance),
                "majority": {"value": self.reference, "present": self.reference_present, "hosts": self.holders,
                             "of": total},
                "outliers": [o.to_json() for o in self.outliers]}


@dataclass
class PeerReport:
    """Findings ranked most likely to matter first; hosts that could not be compared; the reference used."""

    hosts: list[str]
    reference: str
    findings: list[Finding] = field(default_factory=list)
    unique_per_host: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def uniform(self) -> bool:
        return not self.findings

    def outlier_hosts(self) -> list[str]:
        """Hosts named as an outlier in at least one finding, most findings first."""
        counts = Counter(o.host for f in self.findings for o in f.outliers)
        return [host for host, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]

    def to_json(self) -> dict[str, Any]:
        total = len(self.hosts)
        return {"hosts": self.hosts, "reference": self.reference, "uniform": self.uniform,
                "outlier_hosts": self.outlier_hosts(), "findings": [f.to_json(total) for f in self.findings],
                "unique_per_host": self.unique_per_host, "failures": dict(sorted(self.failures.items()))}


def peer_view(document: Mapping[str, Any]) -> dict[str, Any]:
    """The probes of `document` as peers compare them: GPUs keyed by index, board identities left out."""
    probes = copy.deepcopy(dict(document.get("probes") or {}))
    for name in _GPU_PROBES:
        data = (probes.get(name) or {}).get("data")
        if isinstance(data, dict) and isinstance(data.get("gpus"), dict):
            data["gpus"] = {_gpu_label(key, gpu): _without_identity(gpu) for key, gpu in data["gpus"].items()}
    for entry in probes.values():
        if isinstance(entry, dict):
            # How long a probe took, and how it failed in words, are no facts of the machine.
            entry.pop("duration_s", None)
            entry.pop("error", None)
    return probes


def _gpu_label(key: str, gpu: Any) -> str:
    index = gpu.get("index") if isinstance(gpu, dict) else None
    return f"GPU {index}" if index is not None else key


def _without_identity(gpu: Any) -> Any:
    if not isinstance(gpu, dict):
        return gpu
    return {k: v for k, v in gpu.items() if k not in _GPU_IDENTITY}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _set_path(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value


def consensus(views: Mapping[str, dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The probes document holding, for every fact, the value most hosts hold (absent when most lack it).

    Also returns the facts every host holds a different value of (three hosts or more): identities.
    """
    by_host = {host: dict(leaves(view)) for host, view in views.items()}
    paths = sorted({path for found in by_host.values() for path in found})
    merged: dict[str, Any] = {}
    unique: list[str] = []
    for path in paths:
        values = [_canonical(found[path]) if path in found else _ABSENT for found in by_host.values()]
        counts = Counter(values)
        if len(views) >= 3 and len(counts) == len(views):
            unique.append(format_path(("probes", *path)))
        # Most hosts first; ties go to "absent", then to the value that sorts first, so the choice is stable.
        best = min(counts, key=lambda v: (-counts[v], v != _ABSENT, v))
        if best != _ABSENT:
            _set_path(merged, path, json.loads(best))
    return merged, unique


def _as_snapshot(probes: dict[str, Any], name: str, source: str) -> Snapshot:
    return Snapshot(new_document({"name": name, "kind": "reference"}, probes, origin="peer-consensus"), source)


def _holder(change: Change, peers: Mapping[str, Snapshot], fallback: Snapshot) -> Snapshot:
    """A host that holds the reference value of the changed fact (its record is coherent), else `fallback`."""
    for peer in peers.values():
        value = lookup(peer.document, change.parts)
        if change.kind == "added" and value is None or change.kind != "added" and value == change.before:
            return peer
    return fallback


def _relevance(change: Change, catalog: Catalog) -> int:
    """1 for a package the rules watch or whose compiled kernels decide speed, else 0: ranks ties."""
    if change.probe not in ("packages", "kernels") or len(change.parts) < 5:
        return 0
    name = str(change.parts[4]).partition(":")[0]
    normalized = normalize_name(name)
    return int(normalized in {normalize_name(p) for p in catalog.packages} or is_kernel_package(normalized))


def _cause(change: Change, reference: Snapshot, current: Snapshot, catalog: Catalog) -> Explanation | None:
    """The rule's cause and fix for one outlier, measured against a host holding the reference value.

    Rules that mark a difference as no drift (a reading that is expected to differ) give no cause.
    """
    found = fix_for(change, reference, current, catalog)
    if found is None or catalog.rule(found.rule).not_drift:
        return None
    return found


_SIDE = re.compile(r"\bon ([AB])\b")


def _peer_words(text: str, reference_name: str) -> str:
    """An explanation written for a before/after pair (A, B), reworded for a host and its reference."""
    reference = "the majority" if reference_name == "majority" else reference_name
    return _SIDE.sub(lambda m: f"on {reference}" if m[1] == "A" else "here", text)


def _merged(findings: list[Finding]) -> list[Finding]:
    """Findings with the same outliers, values and causes folded into one (one cause, several facts)."""
    groups: dict[str, Finding] = {}
    for finding in findings:
        if not finding.outliers or any(o.cause is None for o in finding.outliers):
            groups[f"path:{finding.path}"] = finding
            continue
        key = _canonical([[o.host, o.cause, o.value, o.present] for o in finding.outliers])
        if key in groups:
            groups[key].also.append(finding.path)
        else:
            groups[key] = finding
    return list(groups.values())


def peer_report(snapshots: Mapping[str, Snapshot], reference: Snapshot | None = None,
                reference_name: str = "majority", failures: Mapping[str, str] | None = None) -> PeerReport:
    """Compare every host's snapshot with `reference` (default: the fleet's consensus) and rank what differs.

    `snapshots` maps the host as the user named it to its snapshot; `failures` maps hosts that gave no
    snapshot to why. Volatile facts (clocks now, uptime, free memory) are never compared.
    """
    hosts = sorted(snapshots)
    report = PeerReport(hosts, reference_name, failures=dict(failures or {}))
    views = {host: peer_view(snapshots[host].document) for host in hosts}
    unique: list[str] = []
    if reference is None:
        merged, unique = consensus(views)
    else:
        merged = peer_view(reference.document)
    base = _as_snapshot(merged, reference_name, f"<{reference_name}>")
    peers = {host: _as_snapshot(views[host], host, host) for host in hosts}
    # Against a baseline its own record is the reference; against the majority, a host that holds it.
    holders = peers if reference is None else {}
    catalog = default_catalog()
    findings: dict[str, Finding] = {}
    set_aside: set[str] = set()
    for host in hosts:
        for change in diff_snapshots(base, peers[host]).changes:
            if change.path in unique:
                set_aside.add(change.path)
                continue
            finding = findings.get(change.path)
            if finding is None:
                finding = Finding(change.path, change.category, change.before, change.kind != "added", 0,
                                  relevance=_relevance(change, catalog))
                findings[change.path] = finding
            cause = _cause(change, _holder(change, holders, base), peers[host], catalog)
            finding.outliers.append(Outlier(host, change.after, change.kind != "removed",
                                            _peer_words(cause.title, reference_name) if cause else None,
                                            cause.confidence if cause else 0.0, cause.fix if cause else None))
    for finding in findings.values():
        finding.holders = len(hosts) - len(finding.outliers)
        finding.outliers.sort(key=lambda o: (-o.confidence, o.host))
    ordered = sorted(findings.values(),
                     key=lambda f: (-f.confidence, -f.relevance, len(f.outliers), f.category, f.path))
    report.findings = _merged(ordered)
    # Only what would otherwise have been reported: volatile readings are never compared at all.
    report.unique_per_host = sorted(set_aside)
    return report


def describe_value(value: Any, present: bool) -> str:
    """A fact's value as the report shows it (`unset` when the host lacks it)."""
    return show_value(value) if present else "unset"
