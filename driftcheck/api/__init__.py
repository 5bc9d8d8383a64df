"""The Python face for harnesses: every verb of the command line as a plain typed function with keyword
options, returning the object the command prints (its `to_json()` is the command's `--format json`).

A benchmark script gates itself without a subprocess:

    import driftcheck
    result = driftcheck.check(against="baseline:default", policy="gate.yaml")
    if result.drift:
        raise SystemExit(result.explained.explanations[0].title)
    driftcheck.take_snapshot(label="after run")
    why = driftcheck.explain("@prev", "@latest", all=True)

Options are checked before any work: a bad value is an `OptionError` naming the field
(`python=/x: no executable interpreter there`). Typed requests (`SnapshotRequest`, `CheckRequest`,
`BenchRequest`, `ConfirmRequest`) carry them inside, and may be given whole. What is not an option (a
connected host, the store, progress reporters) is a keyword argument too. Errors are the typed ones of
`driftcheck.errors`.
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
from driftcheck.api.compare import DiffResult, diff, load
from driftcheck.api.confirm import DEFAULT_READY_TIMEOUT_S, ConfirmRequest, check_trial_options
from driftcheck.api.explain import ExplainResult, explain
from driftcheck.api.importing import STDIN, import_reports
from driftcheck.api.log import SnapshotLog, log
from driftcheck.api.record import record
from driftcheck.api.report import report
from driftcheck.api.show import Shown, show
from driftcheck.api.snapshot import SnapshotRequest, hash_cache_note, keep_snapshot, take_snapshot
from driftcheck.api.verify import Verified, verify
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.snapshot.model import Snapshot

__all__ = ["DEFAULT_MIN_CONFIDENCE", "DEFAULT_READY_TIMEOUT_S", "STDIN", "BaselineList", "BenchRequest", "BenchResult",
           "CheckRequest", "CheckResult", "ConfirmRequest", "DiffResult", "ExplainResult", "Explained", "ProbeOptions",
           "SavedBaseline", "Shown", "ShownBaseline", "Snapshot", "SnapshotDiff", "SnapshotLog", "SnapshotRequest",
           "Verified", "bench", "bench_rerun", "check", "check_trial_options", "diff", "explain", "hash_cache_note",
           "import_reports", "keep_snapshot", "list_baselines", "load", "log", "record", "remove_baseline", "report",
           "save_baseline", "show", "show_baseline", "take_snapshot", "verify"]
