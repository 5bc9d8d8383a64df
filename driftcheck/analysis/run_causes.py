"""Where runs meet `explain`: the causes between the snapshots of two runs, and the telemetry findings
ranked among them.

`explain run:A run:B` diffs the snapshots taken before the two commands, as for any two snapshots;
what this module adds is the telemetry, ranked with the snapshot's causes by confidence, and the
change points of `runs --html` (consecutive runs whose snapshots differ in a way explain ranks).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explained, Explanation, explain
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.runs.compare import Finding, RunComparison, compare_runs
from driftcheck.runs.html import ChangePoint
from driftcheck.runs.reference import is_run_reference, resolve_run
from driftcheck.runs.speculative import PlainRun, accept_length, with_server_accept_length
from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.store.snapshots import Store

TELEMETRY_RULE = "run_telemetry"


def _as_explanation(finding: Finding) -> Explanation:
    return Explanation(TELEMETRY_RULE, finding.category, finding.title, (finding.evidence,), finding.confidence,
                       finding.fix)


def rank_with_telemetry(result: Explained, comparison: RunComparison) -> Explained:
    """`result` with the runs' telemetry findings ranked among its causes (by confidence, then category)."""
    merged = [*result.explanations, *(_as_explanation(f) for f in comparison.findings)]
    merged.sort(key=lambda e: (-e.confidence, e.category, e.title))
    result.explanations = [replace(e, rank=rank) for rank, e in enumerate(merged, start=1)]
    return result


def change_points(runs: list[RunRecord], store: Store | None = None) -> list[ChangePoint]:
    """Each run whose snapshot differs from the previous run's in a way explain ranks, with the top cause."""
    store = store or Store()
    points = []
    for previous, run in pairwise(runs):
        if not previous.snapshot_id or not run.snapshot_id:
            continue
        try:
            result = explain(diff_snapshots(store.by_prefix(previous.snapshot_id), store.by_prefix(run.snapshot_id)))
        except DriftcheckError:
            continue  # a snapshot no longer in the store: no marker rather than a failed page
        if result.explanations and previous.id is not None and run.id is not None:
            points.append(ChangePoint(run.id, previous.id, result.explanations[0].title, len(result.explanations)))
    return points


def plain_run(given: str, store: RunStore | None = None) -> PlainRun:
    """What `--non-spec` names: a run recorded without speculative decoding (`run:9`), or that run's output
    token throughput in tok/s (`73.8`). UsageError for anything else, or for a run that printed an accept
    length (it ran with speculative decoding)."""
    if is_run_reference(given):
        run = _with_server_figures(resolve_run(given, store)[0])
        if accept_length(run) is not None:
            raise UsageError(f"--non-spec {given}: run {run.id} printed an accept length, so it ran with "
                             "speculative decoding; name a run without it")
        return PlainRun(f"run {run.id} without speculative decoding", run=run)
    try:
        value = float(given)
    except ValueError:
        raise UsageError(f"--non-spec {given!r}: give a run (run:ID) or its output throughput in tok/s") from None
    if not value > 0 or value == float("inf"):
        raise UsageError(f"--non-spec {given}: the throughput must be a positive number of tok/s")
    return PlainRun(f"{value:g} tok/s without speculative decoding (given)", throughput=value)


def compare_references(a: str, b: str, non_spec: str | None = None) -> RunComparison | None:
    """The comparison of two run references (`run:12`, `run:@prev`); None unless both name runs.
    `non_spec`: a run without speculative decoding or its throughput (plain_run), for the break-even."""
    if not (is_run_reference(a) and is_run_reference(b)):
        if non_spec is not None:
            raise UsageError("--non-spec compares runs: use it with explain run:A run:B")
        return None
    store = RunStore()
    plain = plain_run(non_spec, store) if non_spec is not None else None
    run_a, run_b = (_with_server_figures(resolve_run(ref, store)[0]) for ref in (a, b))
    return compare_runs(run_a, run_b, plain or _plain_by_server(run_a, run_b))


def _plain_by_server(a: RunRecord, b: RunRecord, snapshots: Store | None = None) -> PlainRun | None:
    """The one of A and B whose SGLang server ran without speculative decoding (its snapshot before the run
    says `speculative_algorithm` null) while the other printed an accept length; None when not so."""
    for spec, other in ((a, b), (b, a)):
        if accept_length(spec) is None or accept_length(other) is not None:
            continue
        server = _server_data(other.snapshot_id, snapshots)
        args = (server or {}).get("server_args")
        if server and server.get("engine") == "sglang" and isinstance(args, dict) \
                and "speculative_algorithm" in args and args["speculative_algorithm"] is None:
            return PlainRun(f"run {other.id}, whose server ran without speculative decoding", run=other)
    return None


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
