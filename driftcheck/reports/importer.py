"""`driftcheck import`: a partial snapshot built from pasted tool outputs and environment reports.

A bug report carries text, not a snapshot: PyTorch's `collect_env`, vLLM's `collect-env`, SGLang's
`check_env`, or nvidia-smi's outputs. Each file's format is found by the registry of
`driftcheck.reports.formats`, and its facts land in the shapes of the probes that own them, so the
result diffs against a machine. Files of one machine combine: one report or GPU description, plus a
topology matrix. What a report said that no probe holds is kept under `host.report` (raw fields, and
the lines nothing understood, verbatim and counted). Imported snapshots are unsigned unless a key is
given: a signature would vouch for facts driftcheck did not observe.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from driftcheck.errors import DriftcheckError, SnapshotError, UsageError
from driftcheck.nvidia.topo import merge_topology
from driftcheck.probes.runner import ProbeOutcome
from driftcheck.reports import formats
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.snapshot.inputs import InputError, read_input
from driftcheck.snapshot.keys import KeyPair
from driftcheck.snapshot.model import Snapshot, new_document, read_snapshot_file
from driftcheck.snapshot.signing import sign_document


class ImportFormatError(DriftcheckError):
    """A file given to `driftcheck import` that is no report or tool output driftcheck reads."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class ImportedFile:
    """One file read: its name, its text's digest, the format found, and what it said."""

    name: str
    sha256: str
    format: Format
    parsed: Parsed


def read_text(path: Path) -> str:
    """The file's text (undecodable bytes replaced); UsageError when it cannot be read."""
    try:
        return read_input(path, "a report").decode("utf-8", errors="replace")
    except InputError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _unknown_reason(text: str) -> str:
    error = next((line.strip() for line in text.splitlines() if line.strip().upper().startswith("ERROR")), None)
    if error:
        return f"holds an nvidia-smi error, not an output to import: {error}"
    names = ", ".join(fmt.title for fmt in formats.FORMATS)
    return f"not a report driftcheck can import (it reads {names})"


def parse_text(text: str, name: str) -> ImportedFile:
    """Detect and parse one pasted text; ImportFormatError when it is no known format or is broken."""
    fmt = formats.detect(text)
    if fmt is None:
        raise ImportFormatError(name, _unknown_reason(text))
    try:
        parsed = fmt.parse(text)
    except ValueError as exc:  # NvidiaFormatError is a ValueError
        raise ImportFormatError(name, f"looks like {fmt.title} output but {exc}") from None
    if not parsed.probes:
        raise ImportFormatError(name, f"looks like {fmt.title} output but holds no fact driftcheck reads")
    return ImportedFile(name, hashlib.sha256(text.encode("utf-8")).hexdigest(), fmt, parsed)


def _check_same_machine(gpu: dict[str, Any], topology: dict[str, Any]) -> None:
    """Refuse a GPU description and a topology matrix whose GPU counts show two different machines."""
    topo_gpus = [d for d in topology.get("devices") or [] if str(d).startswith("GPU")]
    # A description may be trimmed (attached 8, one <gpu> kept): either count may match the matrix.
    counts = {len(gpu.get("gpus") or {}), gpu.get("gpu_count")}
    if topo_gpus and len(topo_gpus) not in counts:
        described = max(c for c in counts if isinstance(c, int))
        raise UsageError(f"the topology matrix shows {len(topo_gpus)} GPUs, the GPU description {described}: "
                         "import files of one machine together")


def _outcome(data: dict[str, Any]) -> dict[str, Any]:
    """A probe outcome as the runner writes it: the import read the facts, so the probe is `ok`."""
    return ProbeOutcome("ok", data=data).to_json()


def _one(files: Sequence[ImportedFile], role: str, what: str) -> ImportedFile | None:
    """The single file of `role`; UsageError naming both when there are two."""
    found = [f for f in files if f.parsed.role == role]
    if len(found) > 1:
        raise UsageError(f"{found[1].name}: a second {what} (the first was {found[0].name}); import one per snapshot")
    return found[0] if found else None


def combine(files: Sequence[ImportedFile]) -> dict[str, Any]:
    """The probes (name → outcome) of the files together: one report, one GPU description, one topology matrix.

    A GPU description (nvidia-smi) says more about the GPUs than a report's list of names, so its `gpu` and
    `pcie` replace the report's; the report's topology matrix, or a separate one, is merged into them.
    """
    report = _one(files, "report", "environment report")
    described = _one(files, "gpu", "GPU description (nvidia-smi -q, -q -x, --query-gpu CSV or the nvidia-smi table)")
    matrix = _one(files, "topology", "topology matrix (nvidia-smi topo -m)")
    probes: dict[str, dict[str, Any]] = dict(report.parsed.probes) if report else {}
    topology = matrix.parsed.probes["pcie"]["topology"] if matrix else None
    if report and matrix and (probes.get("pcie") or {}).get("topology"):
        raise UsageError(f"{matrix.name}: a second topology matrix ({report.name} holds one); import one per snapshot")
    if described is not None:
        if report is not None:
            _check_same_count(report.parsed.probes.get("gpu") or {}, described.parsed.probes["gpu"], described.name)
            topology = topology or (probes.get("pcie") or {}).get("topology")
        probes["gpu"] = described.parsed.probes["gpu"]
        probes["pcie"] = described.parsed.probes["pcie"]
    if topology is not None and (matrix is not None or described is not None):
        pcie = probes.get("pcie") or {"source": "nvidia-smi", "gpus": {}, "topology": None, "p2p": None,
                                      "sysfs": None}
        if "gpu" in probes:
            _check_same_machine(probes["gpu"], topology)
        probes["pcie"] = merge_topology(pcie, topology)
    return {name: _outcome(data) for name, data in probes.items()}


def _check_same_count(listed: dict[str, Any], described: dict[str, Any], name: str) -> None:
    """Refuse a report and a GPU description whose GPU counts show two different machines."""
    counts = (listed.get("gpu_count"), described.get("gpu_count"))
    if None not in counts and counts[0] != counts[1]:
        raise UsageError(f"{name} describes {counts[1]} GPUs, the report lists {counts[0]}: import files of one "
                         "machine together")


def _report_note(files: Sequence[ImportedFile]) -> dict[str, Any] | None:
    """What the text reports said beyond the probes: tool, format, raw fields, unclaimed lines."""
    reports = [f for f in files if f.parsed.role == "report"]
    if not reports:
        return None
    item = reports[0]
    return {"tool": item.format.tool, "format": item.format.name, "variant": item.parsed.variant,
            "fields": dict(item.parsed.fields), "unclaimed": list(item.parsed.unclaimed),
            "unclaimed_count": len(item.parsed.unclaimed), "noise_count": len(item.parsed.noise)}


def import_files(files: Sequence[ImportedFile], label: str | None = None, key: KeyPair | None = None) -> Snapshot:
    """A partial snapshot (origin "imported") of already-parsed files, signed only with `key`."""
    probes = combine(files)
    host: dict[str, Any] = {"name": files[0].name if files else "imported", "kind": "imported",
                            "sources": [{"file": f.name, "format": f.format.title, "sha256": f.sha256,
                                         **({"variant": f.parsed.variant} if f.parsed.variant else {})}
                                        for f in files]}
    note = _report_note(files)
    if note is not None:
        host["report"] = note
    complete = sorted({path for f in files for path in f.parsed.complete})
    if complete:
        host["complete"] = complete
    cut = sorted({path for f in files for path in f.parsed.cut})
    if cut:
        host["cut"] = cut
    document = new_document(host, probes, label=label, origin="imported")
    if key is not None:
        document = sign_document(document, key)
    return Snapshot(document, source="<imported>")


def import_snapshot(paths: Sequence[Path], label: str | None = None, key: KeyPair | None = None) -> Snapshot:
    """A partial snapshot (origin "imported") of the files at `paths`; typed errors for bad input."""
    if not paths:
        raise UsageError("give at least one file to import")
    files = [replace(parse_text(read_text(path), str(path)), name=path.name) for path in paths]
    snapshot = import_files(files, label=label, key=key)
    return Snapshot(snapshot.document, source=", ".join(str(p) for p in paths))


def read_snapshot_or_report(path: Path) -> Snapshot:
    """The snapshot file at `path`, or, when it holds a pasted report instead, that report imported on the fly.

    A JSON file is always read as a snapshot (its error stands); text that is neither says so in one line.
    """
    try:
        return read_snapshot_file(path)
    except SnapshotError as exc:
        try:
            text = read_input(path, "a report").decode("utf-8", errors="replace")
        except InputError:
            raise exc from None
        if text.lstrip("\ufeff \t\r\n").startswith(("{", "[")) or formats.detect(text) is None:
            if text.lstrip().startswith(("{", "[")):
                raise
            raise SnapshotError(str(path), "neither a snapshot nor a report driftcheck can import "
                                           f"({_unknown_reason(text)})") from None
        snapshot = import_files([replace(parse_text(text, str(path)), name=path.name)])
        return Snapshot(snapshot.document, source=str(path))
