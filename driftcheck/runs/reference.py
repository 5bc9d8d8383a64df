"""Run references: `run:12`, `run:@latest`, `run:@prev`, `run:@N`, each optionally `:after`.

A run stands wherever a snapshot does: `run:12` is the snapshot taken just before run 12's command,
`run:12:after` the cheap reading taken right after it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from driftcheck.errors import UnknownSnapshotError

if TYPE_CHECKING:
    from driftcheck.runs.store import RunRecord, RunStore

PREFIX = "run:"
_REFERENCE = re.compile(r"^run:(?P<which>@latest|@prev|@\d+|\d+)(?P<after>:after)?$")
REFERENCE_HELP = "run:ID, run:@latest, run:@prev or run:@N (N-th newest run), with :after for the reading after it"


def is_run_reference(reference: str) -> bool:
    """Whether `reference` names a run rather than a snapshot."""
    return reference.startswith(PREFIX)


def resolve_run(reference: str, store: RunStore | None = None) -> tuple[RunRecord, bool]:
    """The run `reference` names, and whether it asks for the reading after the run."""
    match = _REFERENCE.match(reference)
    if not match:
        raise UnknownSnapshotError(reference, f"not a run reference; use {REFERENCE_HELP}")
    if store is None:
        # Here, not at the top: every snapshot reference asks `is_run_reference`, and only a run's opens the
        # run store (its metrics and records).
        from driftcheck.runs.store import RunStore

        store = RunStore()
    which = match["which"]
    if which.startswith("@"):
        position = which[1:]
        n = 0 if position == "latest" else 1 if position == "prev" else int(position)
        run = store.nth_newest(n)
    else:
        run = store.get(int(which))
    return run, bool(match["after"])


def run_snapshot_id(reference: str, store: RunStore | None = None) -> str:
    """The id of the snapshot a run reference stands for."""
    run, after = resolve_run(reference, store)
    snapshot_id = run.after_snapshot_id if after else run.snapshot_id
    if not snapshot_id:
        when = "after" if after else "before"
        raise UnknownSnapshotError(reference, f"run {run.id} kept no snapshot {when} its command")
    return snapshot_id
