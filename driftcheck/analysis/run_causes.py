"""Where runs meet `explain`: the telemetry findings of two runs ranked among the causes between their
snapshots, and the change points of `runs --html`.

`explain run:A run:B` diffs the snapshots taken before the two commands, as for any two snapshots;
what this module adds is the telemetry, ranked with the snapshot's causes by confidence, and the
change points (consecutive runs whose snapshots differ in a way explain ranks). Functions of run
records and snapshots already read: finding them in the stores is the face's (`driftcheck.api.run_causes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explained, Explanation, explain
from driftcheck.errors import UsageError
from driftcheck.runs.compare import Finding, RunComparison
from driftcheck.runs.html import ChangePoint
from driftcheck.runs.speculative import PlainRun, accept_length
from driftcheck.snapshot.model import Snapshot

if TYPE_CHECKING:
    from driftcheck.runs.store import RunRecord

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


def change_points_of(runs: Sequence[RunRecord], snapshots: Mapping[str, Snapshot]) -> list[ChangePoint]:
    """Each run whose snapshot differs from the previous run's in a way explain ranks, with the top cause.

    `snapshots`: the runs' snapshots by the id their records hold; a run whose snapshot is not there (no
    longer stored) gets no marker rather than failing the page."""
    points = []
    for previous, run in pairwise(runs):
        before = snapshots.get(previous.snapshot_id or "")
        after = snapshots.get(run.snapshot_id or "")
        if before is None or after is None:
            continue
        result = explain(diff_snapshots(before, after))
        if result.explanations and previous.id is not None and run.id is not None:
            points.append(ChangePoint(run.id, previous.id, result.explanations[0].title, len(result.explanations)))
    return points


def given_throughput(given: str) -> PlainRun:
    """`--non-spec 73.8`: the output token throughput, in tok/s, of the same work without speculative decoding.
    UsageError for anything but a positive finite number."""
    try:
        value = float(given)
    except ValueError:
        raise UsageError(f"--non-spec {given!r}: give a run (run:ID) or its output throughput in tok/s") from None
    if not value > 0 or value == float("inf"):
        raise UsageError(f"--non-spec {given}: the throughput must be a positive number of tok/s")
    return PlainRun(f"{value:g} tok/s without speculative decoding (given)", throughput=value)


def plain_named_run(given: str, run: RunRecord) -> PlainRun:
    """`--non-spec run:9`: the run `given` names, as the run without speculative decoding; UsageError when it
    printed an accept length (it ran with speculative decoding)."""
    if accept_length(run) is not None:
        raise UsageError(f"--non-spec {given}: run {run.id} printed an accept length, so it ran with "
                         "speculative decoding; name a run without it")
    return PlainRun(f"run {run.id} without speculative decoding", run=run)


def plain_by_server(a: RunRecord, b: RunRecord, servers: Mapping[str, dict[str, Any]]) -> PlainRun | None:
    """The one of A and B whose SGLang server ran without speculative decoding (its snapshot before the run
    says `speculative_algorithm` null) while the other printed an accept length; None when not so.
    `servers`: the `server` probe's data of the runs' snapshots, by snapshot id."""
    for spec, other in ((a, b), (b, a)):
        if accept_length(spec) is None or accept_length(other) is not None:
            continue
        server = servers.get(other.snapshot_id or "")
        args = (server or {}).get("server_args")
        if server and server.get("engine") == "sglang" and isinstance(args, dict) \
                and "speculative_algorithm" in args and args["speculative_algorithm"] is None:
            return PlainRun(f"run {other.id}, whose server ran without speculative decoding", run=other)
    return None
