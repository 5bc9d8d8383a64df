"""Several GPU descriptions of one machine (the nvidia-smi table and `-q` pasted together) as one.

The most common issue paste holds the default table and `nvidia-smi -q` of the same machine. They key their GPUs
differently (the table by bus id, `-q` by UUID) and say different things (the table's enforced cap, `-q`'s
clocks and limits), so they are merged GPU by GPU, matched by bus id, when they show the same GPUs (the same bus
ids) under the same driver; otherwise they are two machines and refused. The most detailed description is the
base; another adds what the base does not hold. Where both hold a setting and differ, the base's is kept and the
disagreement recorded as a conflict; a reading (a temperature, a power draw) moves between two commands run
seconds apart, so the base's is kept without one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from driftcheck.errors import UsageError
from driftcheck.nvidia.values import normalize_bus_id
from driftcheck.reports.formats.base import Parsed
from driftcheck.snapshot.facts import is_reading
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty
from driftcheck.snapshot.paths import format_path

_WHAT = "GPU description (nvidia-smi -q, -q -x, --query-gpu CSV or the nvidia-smi table)"


def merge_descriptions(described: Sequence[tuple[str, Parsed]],
                       conflicts: list[JSONObject]) -> tuple[int, Parsed] | None:
    """(index of the base among `described`, the descriptions merged); None when there is none.

    UsageError when two descriptions show different GPUs or drivers: two machines, import one per snapshot.
    """
    if not described:
        return None
    base_at = max(range(len(described)), key=lambda i: (_leaf_count(described[i][1].probes), -i))
    base_name, base = described[base_at]
    merged = copy.deepcopy(base.probes)
    for i, (name, other) in enumerate(described):
        if i == base_at:
            continue
        _refuse_other_machine(base_name, base, name, other)
        _merge_gpu_probe(merged, other.probes, name, base_name, conflicts)
    complete = sorted({p for _, parsed in described for p in parsed.complete})
    cut = sorted({p for _, parsed in described for p in parsed.cut} - set(complete))
    fields = {key: value for _, parsed in reversed(described) for key, value in parsed.fields.items()}
    return base_at, Parsed(probes=merged, role="gpu", variant=base.variant, fields=fields,
                           unclaimed=[line for _, parsed in described for line in parsed.unclaimed],
                           noise=[line for _, parsed in described for line in parsed.noise],
                           complete=complete, cut=cut)


def _leaf_count(value: JSONValue) -> int:
    if isinstance(value, dict):
        return sum(_leaf_count(member) for member in value.values())
    return 0 if value is None else 1


def _bus_ids(parsed: Parsed) -> dict[str, str]:
    """Normalized bus id -> the GPU's key in the `gpu` probe."""
    gpus = object_or_empty(object_or_empty(parsed.probes.get("gpu")).get("gpus"))
    found: dict[str, str] = {}
    for key, record in gpus.items():
        bus = object_or_empty(record).get("pci_bus_id")
        if isinstance(bus, str) and (normalized := normalize_bus_id(bus)):
            found[normalized] = key
    return found


def _refuse_other_machine(base_name: str, base: Parsed, name: str, other: Parsed) -> None:
    ours, theirs = _bus_ids(base), _bus_ids(other)
    gpu, other_gpu = object_or_empty(base.probes.get("gpu")), object_or_empty(other.probes.get("gpu"))
    drivers = {gpu.get("driver_version"), other_gpu.get("driver_version")} - {None}
    if not ours or set(ours) != set(theirs) or len(drivers) > 1:
        why = ("another driver" if len(drivers) > 1 and set(ours) == set(theirs)
               else f"other GPUs (bus ids {', '.join(sorted(theirs)) or 'none'} against "
                    f"{', '.join(sorted(ours)) or 'none'})")
        raise UsageError(f"{name}: a second {_WHAT} showing {why} (the first was {base_name}); "
                         "import one per snapshot")


def _merge_gpu_probe(merged: dict[str, JSONObject], other: Mapping[str, JSONObject], name: str, base_name: str,
                     conflicts: list[JSONObject]) -> None:
    """Add `other`'s `gpu` and `pcie` facts to `merged`, each GPU to the base's GPU of the same bus id."""
    for probe in ("gpu", "pcie"):
        theirs = object_or_empty(other.get(probe))
        if probe not in merged:
            merged[probe] = copy.deepcopy(dict(theirs))
            continue
        mine = merged[probe]
        by_bus = {normalize_bus_id(str(object_or_empty(record).get("pci_bus_id"))): key
                  for key, record in object_or_empty(mine.get("gpus")).items()}
        for key, value in theirs.items():
            path = ("probes", probe, "data", key)
            if key == "gpus":
                for their_key, record in object_or_empty(value).items():
                    bus = normalize_bus_id(str(object_or_empty(record).get("pci_bus_id")))
                    own_key = by_bus.get(bus, their_key)
                    gpus = mine.setdefault("gpus", {})
                    if isinstance(gpus, dict):
                        slot = gpus.setdefault(own_key, {})
                        if isinstance(slot, dict):
                            _fill(slot, object_or_empty(record), (*path, own_key), name, base_name, conflicts)
            elif key != "source":
                _fill_one(mine, key, value, path, name, base_name, conflicts)


def _fill(mine: JSONObject, theirs: Mapping[str, JSONValue], path: tuple[str, ...], name: str, base_name: str,
          conflicts: list[JSONObject]) -> None:
    for key, value in theirs.items():
        _fill_one(mine, key, value, (*path, key), name, base_name, conflicts)


def _fill_one(mine: JSONObject, key: str, value: JSONValue, path: tuple[str, ...], name: str, base_name: str,
              conflicts: list[JSONObject]) -> None:
    """Take `value` where `mine` holds nothing at `key`; merge two objects; record two settings that differ."""
    ours = mine.get(key)
    if value is None:
        return
    if ours is None:
        mine[key] = copy.deepcopy(value)
    elif isinstance(ours, dict) and isinstance(value, dict):
        _fill(ours, value, path, name, base_name, conflicts)
    elif ours != value and not _same_number(ours, value) and not is_reading(path):
        conflicts.append({"path": format_path(path), "kept": ours, "kept_from": base_name, "other": value,
                          "other_from": name})


def _same_number(one: JSONValue, other: JSONValue) -> bool:
    """700 and 700.0: one value, as a table and `-q` print it."""
    numbers = (int, float)
    return isinstance(one, numbers) and isinstance(other, numbers) and not isinstance(one, bool) \
        and not isinstance(other, bool) and float(one) == float(other)
