"""The JSON contract of `diff --format json` / `explain --format json` (DESIGN.md), from a result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from driftcheck.analysis.amounts import amount
from driftcheck.analysis.explain.values import human_field
from driftcheck.analysis.partial import not_compared
from driftcheck.analysis.targets import target_difference
from driftcheck.snapshot.bulk import without_gc

if TYPE_CHECKING:
    from driftcheck.analysis.diff import Change
    from driftcheck.analysis.explain.model import Explained

# Units a field name ends with, and how a reader writes a value in them.
# Readings of the machine first (memory, clocks, temperatures), then the probes' own counters, then how the
# snapshot was taken (label, host kind).
_MACHINE_PROBES = ("system", "gpu", "pcie", "nccl", "process", "server")


def reading_order(change: Change) -> tuple[int, str]:
    """Where a reading is listed: the machine's readings before driftcheck's own and the document's."""
    if change.probe in _MACHINE_PROBES:
        return 0, change.path
    return (1 if change.probe else 2), change.path


def _subject(change: Change) -> str:
    """What a reading is about, in words: `numa.nodes.0.memory_total_kib` -> "NUMA node 0 memory total"."""
    parts = [str(part) for part in change.parts]
    rest = parts[3:] if len(parts) > 3 and parts[0] == "probes" else parts
    words = human_field(".".join(rest).replace("nodes.", "node.", 1))
    return words or change.path


def reading_title(change: Change) -> str:
    """One line of context for a reading: "NUMA node 0 memory total 7.4 GiB -> 12.5 GiB: a reading"."""
    return f"{_subject(change)} {amount(change, change.before)} -> {amount(change, change.after)}: a reading"


def readings_json(result: Explained) -> list[dict[str, Any]]:
    """The `readings` of the contract: every value that moved on its own, with a title; never causes."""
    return [{"path": change.path, "before": change.before, "after": change.after, "title": reading_title(change)}
            for change in sorted(result.diff.readings, key=reading_order)]


@without_gc
def report(result: Explained) -> dict[str, Any]:
    """The machine-readable object of DESIGN.md, with notes and the reboot flag added.

    Built with the cyclic collector paused (snapshot/bulk.py): one row per change is millions of new dicts on
    a large diff, and the collections they set off scanned the whole heap of both snapshots again and again."""
    diff = result.diff
    catalog_category = {path: e.category for e in [*result.explanations, *result.notes] for path in e.evidence}
    changes = []
    # Evidence is change paths: a reading a rule weighed (a current clock under load, the boot id) is listed
    # even without --all, so every evidence path is in `changes`.
    evidenced = result.evidence_paths()
    for change in diff.shown(include_readings=True):
        if change.reading and not result.include_volatile and change.path not in evidenced:
            continue
        row = change.to_json()
        if row["category"] == "other" and change.path in catalog_category:
            row["category"] = catalog_category[change.path]
        changes.append(row)
    signed = {"signers": result.signers.to_json()} if result.signers is not None else {}
    return {
        **signed,
        "a": diff.a.summary(),
        "b": diff.b.summary(),
        "explanations": [e.to_json() for e in result.explanations],
        "changes": changes,
        "unchanged": result.unchanged,
        "not_compared": not_compared(diff.a, diff.b),
        "targets": target_difference(diff.a, diff.b).to_json(),
        "readings": readings_json(result),
        "bench": result.bench,
        "notes": [{**e.to_json(), "rank": None} for e in result.notes],
        "rebooted": result.rebooted,
    }
