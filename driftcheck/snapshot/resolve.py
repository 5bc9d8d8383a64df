"""Turning what the user typed (a path, an id prefix, @latest, @prev, @N) into a snapshot."""

from __future__ import annotations

import re
from pathlib import Path

from driftcheck.errors import TamperedSnapshotError, UnknownSnapshotError
from driftcheck.reports.importer import read_snapshot_or_report
from driftcheck.snapshot.baselines import PREFIX as BASELINE_PREFIX
from driftcheck.snapshot.baselines import Baselines
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.store import Store

_POSITION = re.compile(r"^@(latest|prev|\d+)$")


def check_not_tampered(snapshot: Snapshot) -> Snapshot:
    """`snapshot` if it is unsigned or its signature holds; TamperedSnapshotError if it was altered."""
    verdict = verify_document(snapshot.document)
    if verdict.status == "altered":
        raise TamperedSnapshotError(snapshot.source, f"{verdict.message}; `driftcheck verify` says more")
    return snapshot


def resolve_snapshot(reference: str, store: Store | None = None, check_signature: bool = True) -> Snapshot:
    """The snapshot `reference` names: a file, `@latest`, `@prev`, `@N` (N-th newest), `baseline:NAME`
    or an id prefix.

    With `check_signature`, a signed snapshot whose content was altered is refused.
    """
    store = store or Store()
    position = _POSITION.match(reference)
    if reference.startswith(BASELINE_PREFIX):
        snapshot = Baselines(store).snapshot(reference[len(BASELINE_PREFIX):])
    elif position:
        which = position.group(1)
        n = 0 if which == "latest" else 1 if which == "prev" else int(which)
        snapshot = store.nth_newest(n)
    elif reference.startswith("@"):
        raise UnknownSnapshotError(reference, "unknown position; use @latest, @prev or @N (0 = newest)")
    elif Path(reference).exists():
        # A pasted report (collect_env, check_env, nvidia-smi) is imported on the fly.
        snapshot = read_snapshot_or_report(Path(reference))
    elif "/" in reference or reference.endswith((".json", ".yaml")):
        raise UnknownSnapshotError(reference, "no such file")
    else:
        snapshot = store.by_prefix(reference)
    return check_not_tampered(snapshot) if check_signature else snapshot
