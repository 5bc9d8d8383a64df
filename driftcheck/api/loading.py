"""`load`: one snapshot named by reference, as `show` and `verify` read it.

Apart from `compare` (which also diffs and explains) so that reading one snapshot imports neither the diff
engine nor the rule catalog.
"""

from __future__ import annotations

from driftcheck.api.references import resolve_snapshot
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

Side = str | Snapshot


def load(reference: str, *, check_signature: bool = True, store: Store | None = None) -> Snapshot:
    """The snapshot `reference` names: a file (a snapshot or a pasted report), an id or its prefix,
    `@latest`, `@prev`, `@N`, `@boot`, `@before-boot`, `baseline:NAME` or `run:ID`. A signed snapshot whose
    content was altered is refused (TamperedSnapshotError) unless `check_signature=False`."""
    return resolve_snapshot(reference, store or Store(), check_signature)
