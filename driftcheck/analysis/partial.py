"""Comparing an imported report with a snapshot: only what both sides hold.

A pasted report carries a fraction of what a probe gathers (a filtered pip list, a few variables, GPU
names without UUIDs). Before a diff, both documents are cut to the facts both hold: a fact the report
does not carry is "not in the report", never "removed". Where the report lists a map in full (its GPUs,
its topology, a whole `nvidia-smi -q -x`'s process lists: `host.complete`, declared per format) a missing
key is a real difference. GPUs of a report are keyed by index (`GPU0`), so the other side's GPUs are keyed
the same way for the comparison; CPU lists are compared as sets (lscpu's `0,1` is the kernel's `0-1`).

Two snapshots of different interpreters (`driftcheck.analysis.targets`) leave that interpreter's facts
(packages, compiled files, torch) out on both sides. What was left out is counted per side
(`not_compared`): every report says what it did not compare.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from driftcheck.analysis.targets import INTERPRETER_PROBES, is_imported, target_difference
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart, format_path
from driftcheck.snapshot.patterns import PathPattern, compile_pattern

_INDEX_KEY = re.compile(r"^GPU\d+$")
_BUS_KEY = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$")
# Members that say how a fact was read, not what it is.
_HOW_READ = ("source",)
# Facts only an imported report carries (no probe measures them): a probed side without them did not look,
# so they are never "removed" or "added" against it (nvcc's toolkit, the vendor an AMD tool names).
_IMPORT_ONLY = tuple(compile_pattern(p) for p in ("probes.kernels.data.cuda_toolkit", "probes.gpu.data.vendor"))


@dataclass(frozen=True)
class ComparedSnapshot(Snapshot):
    """A snapshot cut for comparison with the other side; keeps the id of the snapshot it was cut from.

    `only_here`: how many facts (leaves) this side held that the other does not, so they were not compared;
    `families`: where they were (`gpu`, `system.thp`); `other_target`: probes left out on both sides because
    the two sides describe different interpreters.
    """

    original_id: str = ""
    only_here: int = 0
    families: tuple[str, ...] = ()
    other_target: tuple[str, ...] = ()
    # Where those facts were: no claim about them ("unchanged") can be made.
    left_out: tuple[tuple[PathPart, ...], ...] = ()

    @property
    def id(self) -> str:
        return self.original_id


def _complete(document: dict[str, Any]) -> tuple[PathPattern, ...]:
    return tuple(compile_pattern(path) for path in (document.get("host") or {}).get("complete") or [])


def fact_count(value: Any) -> int:
    """How many facts (leaves) `value` holds: a list is one value, an unknown (None) none."""
    if isinstance(value, dict):
        return sum(fact_count(v) for v in value.values())
    return 0 if value is None else 1


def family(parts: tuple[PathPart, ...]) -> str:
    """Where a fact lives, for the reader: the probe, and its first member under `data` (`system.thp`)."""
    if len(parts) > 3 and parts[0] == "probes" and parts[2] == "data":
        return f"{parts[1]}.{parts[3]}"
    return str(parts[1]) if len(parts) > 1 and parts[0] == "probes" else format_path(parts)


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


_CPU_LIST = re.compile(r"^\s*\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*\s*$")


def cpu_set(text: str) -> frozenset[int] | None:
    """The CPUs a kernel-style CPU list names (`0-3,8`, `0,1`), or None when `text` is not one."""
    if not _CPU_LIST.match(text):
        return None
    cpus: set[int] = set()
    for item in text.split(","):
        low, _, high = item.strip().partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return frozenset(cpus)


def same_cpu_set(key: PathPart, a: Any, b: Any) -> bool:
    """Whether two differently spelled CPU lists under a CPU-ish key (`cpus`, `cpu_affinity`) name one set."""
    if not (isinstance(a, str) and isinstance(b, str)) or a == b:
        return False
    if not any(word in str(key).lower() for word in ("cpu", "affinity", "online")):
        return False
    sa, sb = cpu_set(a), cpu_set(b)
    return sa is not None and sa == sb


class _Cutter:
    """Walks two probe data trees, dropping what one imported side does not hold."""

    def __init__(self, a_imported: bool, b_imported: bool, a_complete: tuple[PathPattern, ...],
                 b_complete: tuple[PathPattern, ...]) -> None:
        self.imported = (a_imported, b_imported)
        self.complete = (a_complete, b_complete)
        self.left_out: list[str] = []
        self.only = [0, 0]
        self.families: list[set[str]] = [set(), set()]
        self.paths: list[list[tuple[PathPart, ...]]] = [[], []]

    def _partial(self, side: int, parts: tuple[PathPart, ...]) -> bool:
        """Whether a key missing on `side` under `parts` may just be unreported (the map is not declared
        complete by the format that read it)."""
        return self.imported[side] and not any(p.match(parts) is not None for p in self.complete[side])

    def _unmeasured(self, side: int, parts: tuple[PathPart, ...]) -> bool:
        """Whether a fact at `parts` that `side` holds is one only imports carry, the other side being probed."""
        return self.imported[side] and not self.imported[1 - side] and \
            any(p.match(parts) is not None for p in _IMPORT_ONLY)

    def cut(self, a: dict[str, Any], b: dict[str, Any], parts: tuple[PathPart, ...]) -> None:
        for key in list(a):
            if key not in b:
                if self._partial(1, parts) or self._unmeasured(0, (*parts, key)):
                    self.drop(a, key, parts, 0)
            elif isinstance(a[key], dict) and isinstance(b[key], dict):
                self.cut(a[key], b[key], (*parts, key))
            elif same_cpu_set(key, a[key], b[key]):
                # lscpu's `0,1` and the kernel's `0-1` spell one set of CPUs.
                b[key] = a[key]
            elif (a[key] is None or b[key] is None) and any(self.imported) and a[key] != b[key]:
                # One side could not read it: an unknown is not a difference between a report and a machine.
                self.drop(a, key, parts, 0)
                self.drop(b, key, parts, 1)
        for key in list(b):
            if key not in a and (self._partial(0, parts) or self._unmeasured(1, (*parts, key))):
                self.drop(b, key, parts, 1)

    def drop(self, data: dict[Any, Any], key: PathPart, parts: tuple[PathPart, ...], side: int,
             facts: int | None = None) -> None:
        """Leave `data[key]` out of the comparison: `facts` (default: its leaves) of `side` that the other
        side does not hold."""
        facts = fact_count(data[key]) if facts is None else facts
        if side == 0 or not (self.left_out and self.left_out[-1] == format_path((*parts, key))):
            self.left_out.append(format_path((*parts, key)))
        if facts:
            self.only[side] += facts
            self.families[side].add(family((*parts, key)))
            self.paths[side].append((*parts, key))
        del data[key]


def _without(document: dict[str, Any], probes: tuple[str, ...]) -> dict[str, Any]:
    """A deep copy of `document` without `probes` (left out before copying: they can be large)."""
    shallow = {**document, "probes": {k: v for k, v in document["probes"].items() if k not in probes}}
    return copy.deepcopy(shallow)


def comparable(a: Snapshot, b: Snapshot) -> tuple[Snapshot, Snapshot, list[str]]:
    """A and B cut to what both hold, and the paths left out ("not in the report").

    When either side is imported, facts the report does not carry are left out. When the two sides describe
    different interpreters, the facts that belong to one interpreter (`INTERPRETER_PROBES`) are left out on
    both sides. Two probed snapshots of one target come back unchanged, with nothing left out.
    """
    a_imported, b_imported = is_imported(a), is_imported(b)
    other_target = INTERPRETER_PROBES if target_difference(a, b).interpreters else ()
    if not (a_imported or b_imported or other_target):
        return a, b, []
    da, db = _without(a.document, other_target), _without(b.document, other_target)
    _align_gpu_keys(da, db)
    cutter = _Cutter(a_imported, b_imported, _complete(da), _complete(db))
    for name in sorted(set(da["probes"]) | set(db["probes"])):
        pa, pb = da["probes"].get(name), db["probes"].get(name)
        if pa is None or pb is None:
            missing_side = 0 if pa is None else 1
            if cutter.imported[missing_side]:
                holder = db if pa is None else da
                cutter.drop(holder["probes"], name, ("probes",), 1 - missing_side,
                            fact_count((holder["probes"][name] or {}).get("data")))
            continue
        data_a, data_b = pa.get("data"), pb.get("data")
        if pa.get("status") == "ok" and pb.get("status") == "ok" and isinstance(data_a, dict) \
                and isinstance(data_b, dict):
            if a_imported != b_imported:
                for key in _HOW_READ:
                    data_a.pop(key, None)
                    data_b.pop(key, None)
            cutter.cut(data_a, data_b, ("probes", name, "data"))
    sides = [ComparedSnapshot(document, snapshot.source, original_id=snapshot.id, only_here=cutter.only[side],
                              families=tuple(sorted(cutter.families[side])), other_target=other_target,
                              left_out=tuple(cutter.paths[side]))
             for side, (document, snapshot) in enumerate(((da, a), (db, b)))]
    return sides[0], sides[1], sorted(cutter.left_out)


def not_compared(a: Snapshot, b: Snapshot) -> dict[str, Any]:
    """The `not_compared` member of the JSON report, from the two sides a diff compared: how many facts
    only A held, only B held, where they were, and the probes of another interpreter left out."""
    only_a = a.only_here if isinstance(a, ComparedSnapshot) else 0
    only_b = b.only_here if isinstance(b, ComparedSnapshot) else 0
    families = set(a.families if isinstance(a, ComparedSnapshot) else ()) | \
        set(b.families if isinstance(b, ComparedSnapshot) else ())
    other = a.other_target if isinstance(a, ComparedSnapshot) else ()
    cut = sorted({path for side in (a, b) for path in (side.document.get("host") or {}).get("cut") or []})
    return {"only_in_a": only_a, "only_in_b": only_b, "families": sorted(families), "other_target": list(other),
            "cut": cut}


def _facts(n: int) -> str:
    return f"{n} fact" if n == 1 else f"{n} facts"


def not_compared_line(summary: dict[str, Any]) -> str:
    """`not compared: N facts only in A, M only in B (families)`, plus probes of another interpreter."""
    line = f"not compared: {_facts(summary['only_in_a'])} only in A, {summary['only_in_b']} only in B"
    families = summary.get("families") or []
    if families:
        shown = ", ".join(families[:8]) + (f", ... {len(families) - 8} more" if len(families) > 8 else "")
        line += f" ({shown})"
    if summary.get("cut"):
        line += f"; the paste ends inside {', '.join(summary['cut'])}: cut there, not removed"
    if summary.get("other_target"):
        line += f"; {', '.join(summary['other_target'])}: another interpreter on each side"
    return line
