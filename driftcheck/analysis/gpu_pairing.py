"""GPUs of two different boards paired for the diff: by bus id, else by position, when their UUIDs differ.

GPUs are keyed by UUID, so a board swapped into the same slot, or the same model on another machine, shares no
key with the GPU it replaces: the diff saw one GPU removed and one added, and compared none of their settings (an
enforced power cap of 900 W on one and 700 W on the other went unseen). When the GPUs only one side holds are as
many on each side, they are paired: by PCI bus id when every one finds its slot, else, when the two sides share
no GPU at all (two machines), by index. B's paired GPUs take A's keys, so their facts are compared one by one and
the swap itself is one changed `uuid` (with the serial beside it), told once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from driftcheck.analysis.partial import ComparedSnapshot
from driftcheck.snapshot.model import Snapshot

# The probes whose `gpus` map is keyed by the GPU's identity.
_GPU_PROBES = ("gpu", "pcie")


def _gpus(document: Mapping[str, Any], probe: str) -> dict[str, Any]:
    gpus = ((document.get("probes", {}).get(probe) or {}).get("data") or {}).get("gpus")
    return gpus if isinstance(gpus, dict) else {}


def _by_field(a_gpus: Mapping[str, Any], b_gpus: Mapping[str, Any], a_keys: list[str], b_keys: list[str],
              field: str) -> dict[str, str] | None:
    """B key -> A key where each of `b_keys` finds exactly one of `a_keys` with the same `field`; else None."""
    def value(gpus: Mapping[str, Any], key: str) -> object:
        record = gpus.get(key)
        return record.get(field) if isinstance(record, dict) else None

    a_by_value = {value(a_gpus, key): key for key in a_keys}
    b_values = [value(b_gpus, key) for key in b_keys]
    if None in a_by_value or None in b_values or len(a_by_value) != len(a_keys) or len(set(b_values)) != len(b_keys):
        return None
    if set(b_values) != set(a_by_value):
        return None
    return {key: a_by_value[found] for key, found in zip(b_keys, b_values, strict=True)}


def _uuid_keyed(gpus: Mapping[str, Any]) -> bool:
    """Whether every GPU is keyed by its UUID (`GPU-...`), as every source with UUIDs keys them."""
    return bool(gpus) and all(str(key).startswith("GPU-") for key in gpus)


def board_pairs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, str]:
    """B's GPU keys that stand for another key of A (B key -> A key); empty when nothing is to be paired."""
    a_gpus, b_gpus = _gpus(a, "gpu"), _gpus(b, "gpu")
    if not (_uuid_keyed(a_gpus) and _uuid_keyed(b_gpus)):
        return {}  # a side keyed by index or bus id (a report) is aligned by the partial comparison instead
    a_only = [key for key in a_gpus if key not in b_gpus]
    b_only = [key for key in b_gpus if key not in a_gpus]
    if not a_only or len(a_only) != len(b_only):
        return {}
    by_bus = _by_field(a_gpus, b_gpus, a_only, b_only, "pci_bus_id")
    if by_bus is not None:
        return by_bus
    if len(a_only) == len(a_gpus) == len(b_gpus):
        return _by_field(a_gpus, b_gpus, a_only, b_only, "index") or {}
    return {}


def paired_boards(a: Snapshot, b: Snapshot) -> tuple[Snapshot, Snapshot]:
    """A, and B with its paired GPUs keyed as A's (`board_pairs`); both unchanged when none pair."""
    pairs = board_pairs(a.document, b.document)
    if not pairs:
        return a, b
    document = copy.deepcopy(b.document)
    for probe in _GPU_PROBES:
        data = (document.get("probes", {}).get(probe) or {}).get("data")
        if isinstance(data, dict) and isinstance(data.get("gpus"), dict):
            data["gpus"] = {pairs.get(key, key): record for key, record in data["gpus"].items()}
    original = b.original_id if isinstance(b, ComparedSnapshot) else b.id
    return a, ComparedSnapshot(document, b.source, original_id=original)
