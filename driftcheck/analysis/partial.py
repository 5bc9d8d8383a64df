"""Comparing an imported report with a snapshot: only what both sides hold.

A pasted report carries a fraction of what a probe gathers (a filtered pip list, a few variables, GPU
names without UUIDs). Before a diff, both documents are cut to the facts both hold: a fact the report
does not carry is "not in the report", never "removed". Where the report lists a map in full (its GPUs,
its topology) a missing key is a real difference. GPUs of a report are keyed by index (`GPU0`), so the
other side's GPUs are keyed the same way for the comparison.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart, format_path

_INDEX_KEY = re.compile(r"^GPU\d+$")
_BUS_KEY = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$")
# Members that say how a fact was read, not what it is.
_HOW_READ = ("source",)


@dataclass(frozen=True)
class ComparedSnapshot(Snapshot):
    """A snapshot cut for comparison with a report; keeps the id of the snapshot it was cut from."""

    original_id: str = ""

    @property
    def id(self) -> str:
        return self.original_id


def is_imported(snapshot: Snapshot) -> bool:
    """Whether the snapshot was built from pasted text rather than probed."""
    return snapshot.document.get("origin") == "imported"


def _complete(document: dict[str, Any]) -> set[str]:
    return set((document.get("host") or {}).get("complete") or [])


def _rekeyed(gpus: Any, style: str) -> Any:
    """`gpus` keyed by `style` ("index": `GPU<index>`, "bus": PCI bus id), when every entry says it."""
    if not isinstance(gpus, dict) or not gpus or _key_style(gpus) == style:
        return gpus
    field, make = ("index", lambda v: f"GPU{v}") if style == "index" else ("pci_bus_id", str)
    if not all(isinstance(v, dict) and v.get(field) is not None for v in gpus.values()):
        return gpus
    return {make(v[field]): v for v in gpus.values()}


def _key_style(gpus: dict[str, Any]) -> str:
    keys = [str(k) for k in gpus]
    if all(_INDEX_KEY.match(k) for k in keys):
        return "index"
    if all(_BUS_KEY.match(k) for k in keys):
        return "bus"
    return "uuid"


def _gpus(document: dict[str, Any], probe: str) -> dict[str, Any] | None:
    gpus = ((document["probes"].get(probe) or {}).get("data") or {}).get("gpus")
    return gpus if isinstance(gpus, dict) and gpus else None


def _align_gpu_keys(da: dict[str, Any], db: dict[str, Any]) -> None:
    """Key both sides' GPUs alike when a report knows them by less than a UUID: by index (a text report),
    else by PCI bus id (an nvidia-smi table)."""
    for probe in ("gpu", "pcie"):
        found = [g for g in (_gpus(da, probe), _gpus(db, probe)) if g is not None]
        styles = {_key_style(g) for g in found}
        if len(found) < 2 or len(styles) < 2:
            continue
        style = "index" if "index" in styles else "bus"
        for document in (da, db):
            data = document["probes"][probe]["data"]
            data["gpus"] = _rekeyed(data["gpus"], style)


class _Cutter:
    """Walks two probe data trees, dropping what one imported side does not hold."""

    def __init__(self, a_imported: bool, b_imported: bool, a_complete: set[str], b_complete: set[str]) -> None:
        self.imported = (a_imported, b_imported)
        self.complete = (a_complete, b_complete)
        self.left_out: list[str] = []

    def _partial(self, side: int, path: str) -> bool:
        """Whether a key missing on `side` at `path` may just be unreported."""
        return self.imported[side] and path not in self.complete[side]

    def cut(self, a: dict[str, Any], b: dict[str, Any], parts: tuple[PathPart, ...]) -> None:
        path = format_path(parts)
        for key in list(a):
            if key not in b:
                if self._partial(1, path):
                    self._drop(a, key, parts)
            elif isinstance(a[key], dict) and isinstance(b[key], dict):
                self.cut(a[key], b[key], (*parts, key))
            elif (a[key] is None or b[key] is None) and any(self.imported) and a[key] != b[key]:
                # One side could not read it: an unknown is not a difference between a report and a machine.
                self._drop(a, key, parts)
                del b[key]
        for key in list(b):
            if key not in a and self._partial(0, path):
                self._drop(b, key, parts)

    def _drop(self, data: dict[Any, Any], key: PathPart, parts: tuple[PathPart, ...]) -> None:
        self.left_out.append(format_path((*parts, key)))
        del data[key]


def comparable(a: Snapshot, b: Snapshot) -> tuple[Snapshot, Snapshot, list[str]]:
    """A and B cut to what both hold when either is imported, and the paths left out ("not in the report").

    Two probed snapshots come back unchanged, with nothing left out.
    """
    a_imported, b_imported = is_imported(a), is_imported(b)
    if not (a_imported or b_imported):
        return a, b, []
    da, db = copy.deepcopy(a.document), copy.deepcopy(b.document)
    _align_gpu_keys(da, db)
    cutter = _Cutter(a_imported, b_imported, _complete(da), _complete(db))
    for name in sorted(set(da["probes"]) | set(db["probes"])):
        pa, pb = da["probes"].get(name), db["probes"].get(name)
        if pa is None or pb is None:
            missing_side = 0 if pa is None else 1
            if cutter.imported[missing_side]:
                cutter.left_out.append(f"probes.{name}")
                (db if pa is None else da)["probes"].pop(name)
            continue
        data_a, data_b = pa.get("data"), pb.get("data")
        if pa.get("status") == "ok" and pb.get("status") == "ok" and isinstance(data_a, dict) \
                and isinstance(data_b, dict):
            if a_imported != b_imported:
                for key in _HOW_READ:
                    data_a.pop(key, None)
                    data_b.pop(key, None)
            cutter.cut(data_a, data_b, ("probes", name, "data"))
    return (ComparedSnapshot(da, a.source, original_id=a.id), ComparedSnapshot(db, b.source, original_id=b.id),
            sorted(cutter.left_out))
