"""A board swap is one change: a GPU gone from A and another new on B in the same slot.

Probe data is keyed by GPU UUID, so a replaced board reads as one GPU removed and another added, in the
gpu probe and again in the pcie probe: four causes for one event. Where a removed GPU and an added one sat
in the same slot (the same PCI bus id, else the same index) they are told once, as a swap, with every
path as evidence.
"""

from __future__ import annotations

from dataclasses import replace

from driftcheck.analysis.explain.fixes import Sides
from driftcheck.analysis.explain.lookup import gpu_record
from driftcheck.analysis.explain.model import Explanation
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import parse_path

# The rule that claims a whole GPU added or removed (analysis/rules.yaml).
GPU_ADDED_OR_REMOVED = "gpu-added-or-removed"
_GPU_PROBES = ("gpu", "pcie")


def _gpu_key(path: str) -> str | None:
    """The GPU a whole-GPU evidence path names (`probes.gpu.data.gpus.<key>`), None for any other path."""
    parts = parse_path(path)
    if len(parts) == 5 and parts[0] == "probes" and parts[1] in _GPU_PROBES and parts[3] == "gpus":
        return str(parts[4])
    return None


def _slot(snapshot: Snapshot, key: str) -> str | None:
    """Where the GPU keyed `key` sits on `snapshot`: its PCI bus id, else its index; None when unknown."""
    for field in ("pci_bus_id", "index"):
        for probe in _GPU_PROBES:
            value = gpu_record(snapshot, key, probe).get(field)
            if value is not None and not isinstance(value, bool):
                return f"{field}:{str(value).lower()}"
    return None


def _describe(snapshot: Snapshot, key: str) -> str:
    """A board as a reader tells it apart: its name and serial where known, and its UUID."""
    record = gpu_record(snapshot, key)
    words = [str(record[field]) for field in ("name",) if record.get(field)]
    if record.get("serial"):
        words.append(f"serial {record['serial']}")
    return " ".join([*words, f"({key})"]) if words else key


def _swap(sides: Sides, gone: str, new: str, members: list[Explanation]) -> Explanation:
    reference, current = sides.reference, sides.current
    index = gpu_record(reference, gone).get("index", gpu_record(current, new).get("index"))
    slot = gpu_record(reference, gone).get("pci_bus_id") or gpu_record(current, new).get("pci_bus_id")
    where = f"GPU {index}" if index is not None else "a GPU"
    at = f" at {slot}" if slot else ""
    top = max(members, key=lambda e: e.confidence)
    return replace(top, title=f"{where}{at} replaced: {_describe(reference, gone)} -> {_describe(current, new)}",
                   evidence=tuple(sorted({path for e in members for path in e.evidence})),
                   fix=f"check that the board now{at} is the one intended (nvidia-smi -L; nvidia-smi -q -i "
                       f"{index if index is not None else new}): A had {_describe(reference, gone)}",
                   fix_kind="advice", root=f"gpu-slot:{slot or index}")


def board_swaps(causes: list[Explanation], sides: Sides) -> list[Explanation]:
    """`causes` with each GPU removed and GPU added in the same slot told once, as a swap."""
    gone: dict[str, str] = {}
    new: dict[str, str] = {}
    for cause in causes:
        if cause.rule != GPU_ADDED_OR_REMOVED:
            continue
        for key in filter(None, map(_gpu_key, cause.evidence)):
            removed_slot, added_slot = _slot(sides.reference, key), _slot(sides.current, key)
            if removed_slot is not None and added_slot is None:
                gone[key] = removed_slot
            elif added_slot is not None and removed_slot is None:
                new[key] = added_slot
    pairs = {old: added for old, slot in gone.items()
             for added, added_at in new.items() if added_at == slot}
    if not pairs or len(set(pairs.values())) != len(pairs):
        return causes
    out = [cause for cause in causes if not _swap_member(cause, pairs)]
    for old, added in sorted(pairs.items()):
        members = [cause for cause in causes if _swap_member(cause, {old: added})]
        out.append(_swap(sides, old, added, members))
    return out


def _swap_member(cause: Explanation, pairs: dict[str, str]) -> bool:
    """Whether `cause` tells a GPU of a swap removed or added."""
    keys = {*pairs, *pairs.values()}
    return cause.rule == GPU_ADDED_OR_REMOVED and any(_gpu_key(path) in keys for path in cause.evidence)
