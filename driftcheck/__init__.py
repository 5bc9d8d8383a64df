"""driftcheck: signed snapshots of a GPU machine, and why its performance moved between two of them.

The library's face, and the only supported import: plain typed functions with keyword options, and the
types they return. Each does what the command of the same name does, and its result's `to_json()` is what
that command prints with `--format json`.

    import driftcheck
    result = driftcheck.check(driftcheck.CheckRequest(against="baseline:default"))  # the pre-benchmark gate
    taken = driftcheck.take_snapshot(label="after run", python="/opt/venv/bin/python")  # signed, kept in the store
    ranked = driftcheck.explain("@before-boot", "@latest", require_trusted=True)  # references or Snapshots

The functions live in `driftcheck.api` and are imported on first use: an isolated probe's child process
imports `driftcheck.*` and must not pay for the face's imports (cryptography, YAML, the rule catalog, the
stores). Type checkers see them through the `TYPE_CHECKING` imports below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from driftcheck.errors import (
    DriftcheckError,
    HostError,
    OptionError,
    SnapshotError,
    TamperedSnapshotError,
    UnknownSnapshotError,
    UsageError,
)
from driftcheck.snapshot.version import VERSION

__version__ = VERSION

if TYPE_CHECKING:
    from driftcheck.analysis.diff import SnapshotDiff
    from driftcheck.analysis.explain import Explained
    from driftcheck.analysis.gate import CheckResult
    from driftcheck.analysis.policy import Policy
    from driftcheck.api import (
        BenchRequest,
        CheckRequest,
        ConfirmRequest,
        DiffResult,
        ExplainResult,
        Shown,
        SnapshotLog,
        SnapshotRequest,
        Verified,
        check,
        diff,
        explain,
        import_reports,
        load,
        log,
        record,
        report,
        show,
        take_snapshot,
        verify,
    )
    from driftcheck.snapshot.model import Snapshot

# name -> module that defines it; resolved on first attribute access.
_LAZY = {
    "check": "driftcheck.api", "diff": "driftcheck.api", "explain": "driftcheck.api", "load": "driftcheck.api",
    "take_snapshot": "driftcheck.api", "show": "driftcheck.api", "verify": "driftcheck.api", "log": "driftcheck.api",
    "report": "driftcheck.api", "record": "driftcheck.api", "import_reports": "driftcheck.api",
    "BenchRequest": "driftcheck.api", "CheckRequest": "driftcheck.api", "SnapshotRequest": "driftcheck.api",
    "ConfirmRequest": "driftcheck.api", "DiffResult": "driftcheck.api", "ExplainResult": "driftcheck.api",
    "Shown": "driftcheck.api", "SnapshotLog": "driftcheck.api", "Verified": "driftcheck.api",
    "CheckResult": "driftcheck.analysis.gate",
    "Explained": "driftcheck.analysis.explain", "Policy": "driftcheck.analysis.policy",
    "Snapshot": "driftcheck.snapshot.model", "SnapshotDiff": "driftcheck.analysis.diff",
}

if not TYPE_CHECKING:  # hidden from type checkers, so a misspelt name stays an error for them

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'driftcheck' has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)


__all__ = ["BenchRequest", "CheckRequest", "CheckResult", "ConfirmRequest", "DiffResult", "DriftcheckError",
           "ExplainResult", "Explained", "HostError", "OptionError", "Policy", "Shown", "Snapshot", "SnapshotDiff",
           "SnapshotError", "SnapshotLog", "SnapshotRequest", "TamperedSnapshotError", "UnknownSnapshotError",
           "UsageError", "Verified", "__version__", "check", "diff", "explain", "import_reports", "load", "log",
           "record", "report", "show", "take_snapshot", "verify"]
