"""Runs as `explain` and `runs --html` see them: the records and snapshots read from the stores, then
handed to the pure `analysis.run_causes`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from driftcheck.analysis.run_causes import change_points_of, given_throughput, plain_by_server, plain_named_run
from driftcheck.api.references import check_not_tampered, run_snapshot
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.runs.compare import RunComparison, compare_runs
from driftcheck.runs.html import ChangePoint
from driftcheck.runs.reference import is_run_reference, resolve_run
from driftcheck.runs.speculative import PlainRun, with_server_accept_length
from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store


def change_points(runs: Sequence[RunRecord], store: Store | None = None) -> list[ChangePoint]:
    """Each run whose snapshot differs from the previous run's in a way explain ranks, with the top cause;
    the snapshots are read from `store` (default: the user's), and one no longer there gives no marker."""
    store = store or Store()
    return change_points_of(runs, _stored(store, (run.snapshot_id for run in runs)))


def _stored(store: Store, ids: Iterable[str | None]) -> dict[str, Snapshot]:
    """The snapshots of `ids` still in `store`, by id; a collected one is left out."""
    found = {}
    for snapshot_id in ids:
        if not snapshot_id or snapshot_id in found:
            continue
        try:
            found[snapshot_id] = store.by_prefix(snapshot_id)
        except DriftcheckError:
            continue  # a snapshot no longer in the store: no marker rather than a failed page
    return found


def plain_run(given: str, store: RunStore | None = None) -> PlainRun:
    """What `--non-spec` names: a run recorded without speculative decoding (`run:9`), or that run's output
    token throughput in tok/s (`73.8`). UsageError for anything else, or for a run that printed an accept
    length (it ran with speculative decoding)."""
    if is_run_reference(given):
        return plain_named_run(given, _with_server_figures(resolve_run(given, store)[0]))
    return given_throughput(given)


@dataclass(frozen=True)
class ResolvedRun:
    """A run reference (`run:12`, `run:@prev:after`) resolved once: the run, and whether it names the reading
    after the run rather than the snapshot before it."""

    reference: str
    run: RunRecord
    after: bool

    def snapshot(self, store: Store, check_signature: bool = True) -> Snapshot:
        """The snapshot the reference stands for (an altered signed one refused with `check_signature`)."""
        found = run_snapshot(self.reference, self.run, self.after, store)
        return check_not_tampered(found) if check_signature else found


@dataclass(frozen=True)
class ComparedRuns:
    """Two runs compared: their figures and telemetry (`comparison`) and each side as resolved."""

    comparison: RunComparison
    a: ResolvedRun
    b: ResolvedRun


def compare_references(a: str, b: str, non_spec: str | None = None,
                       store: Store | None = None) -> ComparedRuns | None:
    """The comparison of two run references (`run:12`, `run:@prev`), each resolved once; None unless both
    name runs. `non_spec`: a run without speculative decoding or its throughput (plain_run), for the
    break-even; refused (UsageError) unless both name runs."""
    if not (is_run_reference(a) and is_run_reference(b)):
        if non_spec is not None:
            raise UsageError("--non-spec compares runs: use it with explain run:A run:B")
        return None
    store = store or Store()
    runs = RunStore(store.path)
    plain = plain_run(non_spec, runs) if non_spec is not None else None
    side_a, side_b = (ResolvedRun(ref, *resolve_run(ref, runs)) for ref in (a, b))
    run_a, run_b = (_with_server_figures(side.run, store) for side in (side_a, side_b))
    if plain is None:
        servers = {snapshot_id: data for snapshot_id in (run_a.snapshot_id, run_b.snapshot_id) if snapshot_id
                   if (data := _server_data(snapshot_id, store)) is not None}
        plain = plain_by_server(run_a, run_b, servers)
    return ComparedRuns(compare_runs(run_a, run_b, plain), side_a, side_b)


def _server_data(snapshot_id: str | None, snapshots: Store | None = None) -> dict[str, Any] | None:
    """The `server` probe's data in a snapshot of the store; None when absent or collected."""
    if not snapshot_id:
        return None
    try:
        return (snapshots or Store()).by_prefix(snapshot_id).probe_data("server")
    except DriftcheckError:
        return None  # the snapshot was collected: no server figure rather than a failed comparison


def _with_server_figures(run: RunRecord, snapshots: Store | None = None) -> RunRecord:
    """`run` with the accept length its server reported after it (a run recorded with --server), when its
    output gave none; unchanged when there is no such snapshot or figure."""
    return with_server_accept_length(run, _server_data(run.after_snapshot_id, snapshots))
