"""`runs`: the run records `driftcheck run` (and `try`) kept, listed, one of them by reference, or charted."""

from __future__ import annotations

from dataclasses import dataclass, field

from driftcheck.api.run_causes import change_points
from driftcheck.runs.html import ChangePoint
from driftcheck.runs.reference import PREFIX, REFERENCE_HELP, resolve_run
from driftcheck.runs.shapes import RunRecordJson
from driftcheck.runs.store import RunRecord, RunStore

# How a run is named, as help texts say it.
RUN_REFERENCE_HELP = REFERENCE_HELP


@dataclass
class RunHistory:
    """Runs, oldest first; with `causes`, where the snapshot changed between two of them and its top cause."""

    runs: list[RunRecord]
    change_points: list[ChangePoint] = field(default_factory=list)

    def to_json(self) -> list[RunRecordJson]:
        """The runs as `driftcheck runs --format json` prints them."""
        return [run.to_json() for run in self.runs]


def run_history(*, limit: int | None = None, label: str | None = None, causes: bool = False,
         store: RunStore | None = None) -> RunHistory:
    """The recorded runs, oldest first: the last `limit`, only those labelled `label`. `causes` also explains
    each change of snapshot between consecutive runs (a diff per change: what the HTML page marks)."""
    found = (store or RunStore()).entries(limit, label)
    return RunHistory(found, change_points(found) if causes else [])


def run_record(reference: str | int, *, store: RunStore | None = None) -> RunRecord:
    """The run `reference` names: an id (`12`, `"12"`) or a run reference (`run:12`, `run:@latest`, `run:@prev`,
    `run:@N`); resolved once, here. UnknownSnapshotError when there is no such run."""
    given = str(reference)
    record, _ = resolve_run(given if given.startswith(PREFIX) else PREFIX + given, store or RunStore())
    return record
