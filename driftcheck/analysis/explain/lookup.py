"""Looking facts up in a snapshot: a value at a path, a probe's data, a GPU's record, a package's version."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart


def lookup(document: Any, parts: Sequence[PathPart]) -> Any:
    """The value at `parts` in `document`, or None when any step is missing."""
    for part in parts:
        in_dict = isinstance(document, dict) and part in document
        in_list = isinstance(document, list) and isinstance(part, int) and 0 <= part < len(document)
        if not (in_dict or in_list):
            return None
        document = document[part]
    return document


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (a fact a probe did not record)."""
    return value if isinstance(value, dict) else {}


def number(value: Any) -> float | None:
    """A numeric fact as a float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def probe_data(snapshot: Snapshot, name: str) -> dict[str, Any]:
    """The data of probe `name` in `snapshot` (empty when it did not succeed)."""
    return snapshot.probe_data(name) or {}


def gpu_record(snapshot: Snapshot, key: str, probe: str = "gpu") -> dict[str, Any]:
    """The record of the GPU keyed `key` (UUID or bus id) in the `gpu` or `pcie` probe."""
    return mapping(lookup(probe_data(snapshot, probe), ("gpus", key)))


def gpu_label(snapshots: Sequence[Snapshot], key: str) -> tuple[str, str]:
    """("GPU 3", "3") for the GPU keyed `key` in the first of `snapshots` that knows it; the key if none."""
    for snapshot in snapshots:
        for probe in ("gpu", "pcie"):
            index = gpu_record(snapshot, key, probe).get("index")
            if isinstance(index, int) and not isinstance(index, bool):
                return f"GPU {index}", str(index)
    return key, key


def gpu_idle(snapshot: Snapshot, key: str) -> bool:
    """Whether the GPU keyed `key` was idle when read (its clocks then say nothing about load)."""
    record = gpu_record(snapshot, key)
    reasons = record.get("clock_event_reasons") or []
    utilization = lookup(record, ("utilization", "gpu_pct"))
    return "idle" in reasons or utilization == 0


def dist_of(file_key: str) -> tuple[str, str]:
    """("torch", "torch/lib/libc10.so") from the kernels probe's file key "torch:torch/lib/libc10.so"."""
    dist, _, rel = file_key.partition(":")
    return dist, rel


def packages(snapshot: Snapshot) -> dict[str, Any]:
    """The packages probe's distributions, keyed by normalized name."""
    return mapping(probe_data(snapshot, "packages").get("packages"))


def package_record(snapshot: Snapshot, dist: str) -> dict[str, Any]:
    """The record of distribution `dist` (any spelling of its name); empty when not installed."""
    found = packages(snapshot)
    return mapping(found.get(dist) or found.get(normalized(dist)))


def package_version(snapshot: Snapshot, dist: str) -> Any:
    """The installed version of `dist`, or None."""
    return package_record(snapshot, dist).get("version")


def normalized(name: str) -> str:
    """A distribution name as the packages probe keys it (PEP 503: lower case, runs of -_. as -)."""
    out, previous = [], ""
    for ch in name.lower():
        ch = "-" if ch in "-_." else ch
        if not (ch == "-" and previous == "-"):
            out.append(ch)
        previous = ch
    return "".join(out)
