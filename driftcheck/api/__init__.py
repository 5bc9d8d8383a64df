"""The Python face for harnesses: every verb of the command line as a plain typed function with keyword
options, returning the object the command prints (its `to_json()` is the command's `--format json`).

A benchmark script gates itself without a subprocess:

    import driftcheck
    result = driftcheck.check(driftcheck.CheckRequest(against="baseline:default"))
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
from driftcheck.api.check import CheckRequest, bench_rerun, check
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

__all__ = ["DEFAULT_READY_TIMEOUT_S", "STDIN", "BenchRequest", "CheckRequest", "CheckResult", "ConfirmRequest",
           "DiffResult", "ExplainResult", "Explained", "ProbeOptions", "Shown", "Snapshot", "SnapshotDiff",
           "SnapshotLog", "SnapshotRequest", "Verified", "bench_rerun", "check", "check_trial_options", "diff",
           "explain", "hash_cache_note", "import_reports", "keep_snapshot", "load", "log", "record", "report", "show",
           "take_snapshot", "verify"]
