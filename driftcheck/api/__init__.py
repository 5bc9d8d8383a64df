"""The Python face for harnesses: `take_snapshot(...)` and `check(...)`, the calls the CLI itself makes.

A benchmark script gates itself without a subprocess:

    import driftcheck
    result = driftcheck.check(against="baseline:default", policy="gate.yaml")
    if result.drift:
        raise SystemExit(result.explained.explanations[0].title)
    driftcheck.take_snapshot(driftcheck.SnapshotRequest(label="after run"))

Options travel as typed, frozen requests (`SnapshotRequest`, `CheckRequest`, `BenchRequest`), checked
when built: a bad value is an `OptionError` naming the field (`python=/x: no executable interpreter
there`). What is not an option (a connected host, the store, progress reporters) is a keyword argument.
Errors are the typed ones of `driftcheck.errors`.
"""

from __future__ import annotations

from driftcheck.analysis.diff import SnapshotDiff
from driftcheck.analysis.explain import Explained
from driftcheck.analysis.gate import CheckResult
from driftcheck.api.baseline import (
    BaselineList,
    SavedBaseline,
    ShownBaseline,
    list_baselines,
    remove_baseline,
    save_baseline,
    show_baseline,
)
from driftcheck.api.bench import BenchResult, bench
from driftcheck.api.check import DEFAULT_MIN_CONFIDENCE, CheckRequest, bench_rerun, check
from driftcheck.api.compare import diff, explain, load
from driftcheck.api.snapshot import SnapshotRequest, take_snapshot
from driftcheck.probes.base import BenchRequest
from driftcheck.snapshot.model import Snapshot

__all__ = ["DEFAULT_MIN_CONFIDENCE", "BaselineList", "BenchRequest", "BenchResult", "CheckRequest", "CheckResult",
           "Explained", "SavedBaseline", "ShownBaseline", "Snapshot", "SnapshotDiff", "SnapshotRequest", "bench",
           "bench_rerun", "check", "diff", "explain", "list_baselines", "load", "remove_baseline", "save_baseline",
           "show_baseline", "take_snapshot"]
