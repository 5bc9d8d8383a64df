"""`load`, `diff`, `explain`: snapshots named by reference, and what differs between two of them."""

from __future__ import annotations

from driftcheck.analysis.diff import SnapshotDiff, diff_snapshots
from driftcheck.analysis.explain import Explained
from driftcheck.analysis.explain import explain as explain_diff
from driftcheck.analysis.references import resolve_snapshot
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store


def load(reference: str, store: Store | None = None) -> Snapshot:
    """The snapshot `reference` names: a file (a snapshot or a pasted report), an id or its prefix,
    `@latest`, `@prev`, `@N`, `@boot`, `@before-boot`, `baseline:NAME` or `run:ID`."""
    return resolve_snapshot(reference, store or Store())


def diff(a: Snapshot, b: Snapshot) -> SnapshotDiff:
    """Every difference between two snapshots, each with its category (volatile ones marked)."""
    return diff_snapshots(a, b)


def explain(a: Snapshot, b: Snapshot) -> Explained:
    """The differences between `a` and `b` ranked by how likely each moved performance, with fixes."""
    return explain_diff(diff_snapshots(a, b))
