"""The JSON contract of `diff --format json` / `explain --format json` (DESIGN.md), from a result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from driftcheck.analysis.partial import not_compared
from driftcheck.analysis.targets import target_difference

if TYPE_CHECKING:
    from driftcheck.analysis.explain.model import Explained


def report(result: Explained) -> dict[str, Any]:
    """The machine-readable object of DESIGN.md, with notes and the reboot flag added."""
    diff = result.diff
    catalog_category = {path: e.category for e in [*result.explanations, *result.notes] for path in e.evidence}
    changes = []
    # Evidence is change paths: a volatile reading a rule weighed (a current clock, the boot id) is listed
    # even without --all, so every evidence path is in `changes`.
    evidenced = result.evidence_paths()
    for change in diff.shown(include_volatile=True):
        if change.volatile and not result.include_volatile and change.path not in evidenced:
            continue
        row = change.to_json()
        if row["category"] == "other" and change.path in catalog_category:
            row["category"] = catalog_category[change.path]
        changes.append(row)
    return {
        "a": diff.a.summary(),
        "b": diff.b.summary(),
        "explanations": [e.to_json() for e in result.explanations],
        "changes": changes,
        "unchanged": result.unchanged,
        "not_compared": not_compared(diff.a, diff.b),
        "targets": target_difference(diff.a, diff.b).to_json(),
        "bench": result.bench,
        "notes": [{**e.to_json(), "rank": None} for e in result.notes],
        "rebooted": result.rebooted,
    }
