"""A check's result cut down to the verdict the operators' stacks take (`reports/drift_verdict.py`)."""

from __future__ import annotations

import time

from driftcheck.analysis.gate import CheckResult
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.store.named import NamedSnapshots
from driftcheck.store.snapshots import Store


def reference_name(against: str | None, result: CheckResult, store: Store) -> str:
    """How the reference is named in a label: as the user gave it, else the baseline that holds it (`default`
    when `check` found that one), else its short snapshot id."""
    if against:
        return against
    names = [entry.name for entry in NamedSnapshots(store).entries() if entry.snapshot_id == result.reference.id]
    return ("default" if "default" in names else names[0]) if names else result.reference.short_id


def first_cause(result: CheckResult) -> str | None:
    """One line naming why the check found drift: the top cause, else the first policy violation, else the
    first benchmark that moved; None when there is no drift."""
    if not result.drift:
        return None
    if result.relevant:
        return str(result.relevant[0].title)
    if result.violations:
        return result.violations[0]
    shifted = result.bench_shifts[0]
    return f"benchmark {shifted.get('name')} {shifted.get('verdict')}"


def drift_verdict(result: CheckResult, reference: str, checked_at: float | None = None) -> DriftVerdict:
    """The verdict of `result` against `reference` (a name), checked at `checked_at` (default: now)."""
    causes: dict[str, int] = {}
    for explanation in result.relevant:
        causes[explanation.category] = causes.get(explanation.category, 0) + 1
    return DriftVerdict(reference=reference, drift=result.drift,
                        checked_at=time.time() if checked_at is None else checked_at,
                        causes=causes, first_cause=first_cause(result))
