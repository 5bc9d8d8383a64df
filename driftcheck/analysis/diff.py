"""Structural diff of two snapshots: every changed fact, with its category and class from the facts table.

Changes of a fact classed `reading` (driftcheck/snapshot/facts.yaml: free memory, temperatures, current
clocks, uptime...) are kept apart in `readings`: they move on their own and are never causes. Changes of a
`record` (how the snapshot was taken: the label, `--deep`, the hash cache's counters, the boot id) and
readings whose two values read the same once rounded (23.0 GiB -> 23.0 GiB) are never causes either, and
not listed among the readings (`unlisted`).

The changed leaves inside each probe's data are found by a walk that skips identical subtrees; lists
are compared as wholes (probe data is keyed by identity, so a list is an ordered value such as a
command line, not a collection).
A probe that succeeded on one side only is reported as an outcome change, never as "everything
removed".

A fact is a change only when both sides took it: a fact one side holds and the other did not take (a
probe that ran on one side only, or failed there; a fact taken only with a flag of its probe that one side
did not set, such as torch's runtime facts without `--deep`: facts.yaml `taken_with`) is "not taken",
counted per side in `not_compared` and left out of every claim, never "none -> 0".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from driftcheck.analysis.amounts import reads_the_same
from driftcheck.analysis.gpu_pairing import paired_boards
from driftcheck.analysis.not_taken import NotTaken, with_not_taken
from driftcheck.analysis.partial import comparable, fact_count
from driftcheck.snapshot.bulk import without_gc
from driftcheck.snapshot.facts import fact_table
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart, format_path

# Document members outside the probes that the diff compares (the facts table classes them too).
_DOCUMENT_MEMBERS = ("host", "label", "tool", "origin")


@dataclass(frozen=True)
class Change:
    """One difference between snapshot A and B."""

    parts: tuple[PathPart, ...]
    kind: str  # added | removed | changed
    before: Any
    after: Any
    category: str
    # A value that moves on its own or a record of the taking (facts.yaml `class: reading|record`): never a cause.
    reading: bool = False

    @cached_property
    def path(self) -> str:
        """The printed path (`probes.env.data.vars.HOME`), written once: explain, the reports and the sorts
        ask each change for it about ten times."""
        return format_path(self.parts)

    @property
    def probe(self) -> str | None:
        return str(self.parts[1]) if len(self.parts) > 1 and self.parts[0] == "probes" else None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "before": self.before, "after": self.after,
                "category": self.category}


@dataclass
class SnapshotDiff:
    """All changes from A to B; `changes` holds the candidate causes, `readings` the values that move on
    their own (shown as context, never causes)."""

    a: Snapshot
    b: Snapshot
    changes: list[Change] = field(default_factory=list)
    readings: list[Change] = field(default_factory=list)
    # Never causes and not worth listing as readings: records of the taking, readings that round to one text.
    unlisted: list[Change] = field(default_factory=list)
    # Facts one side holds that an imported report cannot carry: not compared, never "removed".
    not_in_report: list[str] = field(default_factory=list)
    # A and B as taken, before being cut to the facts both hold (None when nothing was cut): what only one
    # side can hold (B's interpreter, when A is a pasted report) is read from these, never compared.
    whole: tuple[Snapshot, Snapshot] | None = None

    def shown(self, include_readings: bool = False) -> list[Change]:
        """The changes, sorted by path; the readings and the unlisted records too when asked (`--all`)."""
        extra = self.readings + self.unlisted if include_readings else []
        return sorted(self.changes + extra, key=lambda c: c.path)


_MISSING = object()


def _same(before: Any, after: Any) -> bool:
    """Equal and of the same type all the way down (1, 1.0 and True differ, as they do for deepdiff)."""
    if type(before) is not type(after):
        return False
    if isinstance(before, dict):
        return before.keys() == after.keys() and all(_same(before[k], after[k]) for k in before)
    if isinstance(before, list):
        return len(before) == len(after) and all(_same(x, y) for x, y in zip(before, after, strict=True))
    return bool(before == after)


def _leaf_changes(before: Any, after: Any) -> list[tuple[tuple[PathPart, ...], Any, Any]]:
    """(path, before, after) for every changed leaf; a change inside a list is reported on the list.

    Identical subtrees are skipped by one equality test each, so two large snapshots that differ in a
    handful of facts cost little more than comparing them (a full deepdiff walks every leaf).
    """
    out: list[tuple[tuple[PathPart, ...], Any, Any]] = []
    _walk(before, after, (), out)
    return out


def _walk(before: Any, after: Any, prefix: tuple[PathPart, ...],
          out: list[tuple[tuple[PathPart, ...], Any, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                out.append(((*prefix, key), before[key], _MISSING))
            elif not _same(before[key], after[key]):
                _walk(before[key], after[key], (*prefix, key), out)
        out.extend(((*prefix, key), _MISSING, after[key]) for key in after if key not in before)
    elif not _same(before, after):
        out.append((prefix, before, after))


def _change(parts: tuple[PathPart, ...], before: Any, after: Any, category: str, reading: bool) -> Change:
    if before is _MISSING:
        return Change(parts, "added", None, after, category, reading)
    if after is _MISSING:
        return Change(parts, "removed", before, None, category, reading)
    return Change(parts, "changed", before, after, category, reading)


def _taken_facts(outcome: dict[str, Any] | None) -> int:
    """How many facts a probe's outcome holds: none unless it succeeded."""
    if outcome is None or outcome.get("status") != "ok":
        return 0
    return fact_count(outcome.get("data"))


def _probe_changes(name: str, a: dict[str, Any] | None, b: dict[str, Any] | None,
                   not_taken: NotTaken) -> list[Change]:
    facts = fact_table()
    default = facts.category(("probes", name))
    if a is None or b is None or a["status"] != b["status"]:
        # One side has no data to compare: its facts are not compared, and the outcome says why.
        for side, outcome in enumerate((a, b)):
            not_taken.add(side, ("probes", name), _taken_facts(outcome))
        if a is None or b is None:
            return [_change(("probes", name), _MISSING if a is None else a.get("status"),
                            _MISSING if b is None else b.get("status"), default, False)]
        return [Change(("probes", name, "status"), "changed", a["status"], b["status"], default)]
    if a["status"] != "ok":
        return []
    changes = []
    data_a, data_b = a.get("data") or {}, b.get("data") or {}
    for parts, old, new in _leaf_changes(data_a, data_b):
        full = ("probes", name, "data", *parts)
        flag = facts.taken_with(full)
        # A side whose probe says it did not look (`deep: false`); an imported report carries no such flag,
        # and what it holds it read.
        taken = (flag is None or data_a.get(flag) is not False, flag is None or data_b.get(flag) is not False)
        if not all(taken):
            # Taken only with the probe's own flag (torch's runtime facts need `--deep`): one side did not look.
            for side, value in enumerate((old, new)):
                if taken[side] and value is not _MISSING:
                    not_taken.add(side, full, fact_count(value))
            continue
        changes.append(_change(full, old, new, facts.category(full), facts.never_cause(full)))
    return changes


@without_gc
def diff_snapshots(a: Snapshot, b: Snapshot) -> SnapshotDiff:
    """Every difference between A and B, split into candidate causes and readings (by the facts table).

    GPUs of two boards (UUIDs that differ) are first paired by bus id or position (`gpu_pairing`); when either
    side is an imported report, both are then cut to the facts both hold.
    """
    a, b = paired_boards(a, b)
    cut_a, cut_b, not_in_report = comparable(a, b)
    whole = None if cut_a is a and cut_b is b else (a, b)
    a, b = cut_a, cut_b
    all_changes: list[Change] = []
    not_taken = NotTaken()
    facts = fact_table()
    for key in _DOCUMENT_MEMBERS:
        for parts, old, new in _leaf_changes({key: a.document.get(key)}, {key: b.document.get(key)}):
            all_changes.append(_change(parts, old, new, facts.category(parts), facts.never_cause(parts)))
    names = list(dict.fromkeys([*a.document["probes"], *b.document["probes"]]))
    for name in names:
        before, after = a.document["probes"].get(name), b.document["probes"].get(name)
        all_changes.extend(_probe_changes(name, before, after, not_taken))
    a, b = with_not_taken(a, b, not_taken)
    result = SnapshotDiff(a, b, not_in_report=not_in_report, whole=whole)
    for change in all_changes:
        _place(result, change, facts.reading(change.parts))
    return result


def _place(result: SnapshotDiff, change: Change, reading: bool) -> None:
    """Put `change` where it belongs: a candidate cause, a reading worth listing, or unlisted."""
    if not change.reading:
        result.changes.append(change)
    elif reading and not reads_the_same(change):
        result.readings.append(change)
    else:
        result.unlisted.append(change)

