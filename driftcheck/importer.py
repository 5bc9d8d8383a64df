"""`driftcheck import`: a partial snapshot built from pasted NVIDIA tool outputs.

A bug report carries `nvidia-smi -q -x`, `nvidia-smi -q`, `--query-gpu` CSV or `nvidia-smi topo -m` output, not a
snapshot. Importing it yields the `gpu` and `pcie` probes of a snapshot (origin "imported"), so it
can be diffed against a machine. Several files of the same machine combine: one GPU description (XML
or text) plus one topology matrix. Imported snapshots are unsigned unless a key is given: a signature
would vouch for facts driftcheck did not observe, so signing is an explicit choice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.keys import KeyPair
from driftcheck.nvidia.detect import (
    FORMAT_NAMES,
    SMI_CSV,
    SMI_TEXT,
    SMI_XML,
    TOPO,
    detect_format,
    merge_topology,
    parse_output,
)
from driftcheck.nvidia.values import NvidiaFormatError
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.signing import sign_document


class ImportFormatError(DriftcheckError):
    """A file given to `driftcheck import` that is not a readable NVIDIA tool output."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not an nvidia-smi output") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _unknown_reason(text: str) -> str:
    error = next((line.strip() for line in text.splitlines() if line.strip().upper().startswith("ERROR")), None)
    if error:
        return f"holds an nvidia-smi error, not an output to import: {error}"
    return ("not an nvidia-smi output driftcheck can import (expected nvidia-smi -q -x, nvidia-smi -q, "
            "nvidia-smi --query-gpu --format=csv or nvidia-smi topo -m)")


def _outcome(data: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "data": data, "error": None, "duration_s": 0.0}


def _check_same_machine(gpu: dict[str, Any], topology: dict[str, Any]) -> None:
    """Refuse a GPU description and a topology matrix whose GPU counts show two different machines."""
    topo_gpus = [d for d in topology.get("devices") or [] if str(d).startswith("GPU")]
    # A description may be trimmed (attached 8, one <gpu> kept): either count may match the matrix.
    counts = {len(gpu.get("gpus") or {}), gpu.get("gpu_count")}
    if topo_gpus and len(topo_gpus) not in counts:
        described = max(c for c in counts if isinstance(c, int))
        raise UsageError(f"the topology matrix shows {len(topo_gpus)} GPUs, the GPU description {described}: "
                         "import files of one machine together")


def parse_files(paths: Sequence[Path]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The probes (name → outcome) the files describe, and what each file was; typed errors for bad input."""
    if not paths:
        raise UsageError("give at least one file to import")
    described: dict[str, Any] | None = None
    topology: dict[str, Any] | None = None
    sources: list[dict[str, str]] = []
    for path in paths:
        text = _read(path)
        kind = detect_format(text)
        if kind is None:
            raise ImportFormatError(str(path), _unknown_reason(text))
        try:
            parsed = parse_output(text, kind)
        except NvidiaFormatError as exc:
            raise ImportFormatError(str(path), f"looks like {FORMAT_NAMES[kind]} output but {exc}") from None
        if kind in (SMI_XML, SMI_TEXT, SMI_CSV):
            if described is not None:
                raise UsageError(f"{path}: a second GPU description; import one nvidia-smi -q (or -q -x, or "
                                 "--query-gpu CSV) output per snapshot")
            described = parsed
        elif kind == TOPO:
            if topology is not None:
                raise UsageError(f"{path}: a second topology matrix; import one nvidia-smi topo -m per snapshot")
            topology = parsed
        sources.append({"file": path.name, "format": FORMAT_NAMES[kind],
                        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()})
    probes: dict[str, Any] = {}
    if described is not None:
        probes["gpu"] = _outcome(described["gpu"])
        pcie = described["pcie"]
    else:
        pcie = {"source": "nvidia-smi", "gpus": {}, "topology": None, "p2p": None, "sysfs": None}
    if topology is not None:
        if described is not None:
            _check_same_machine(described["gpu"], topology)
        pcie = merge_topology(pcie, topology)
    probes["pcie"] = _outcome(pcie)
    return probes, sources


def import_snapshot(paths: Sequence[Path], label: str | None = None, key: KeyPair | None = None) -> Snapshot:
    """A partial snapshot (origin "imported") of the nvidia-smi outputs in `paths`, signed only with `key`."""
    probes, sources = parse_files(paths)
    host = {"name": "imported", "kind": "imported", "sources": sources}
    document = new_document(host, probes, label=label, origin="imported")
    if key is not None:
        document = sign_document(document, key)
    return Snapshot(document, source="<imported>")
