"""driftcheck: signed snapshots of a GPU machine, and why its performance moved between two of them.

The library's face, and the only supported import: plain typed functions with keyword options, and the
types they return. Each does what the command of the same name does, and its result's `to_json()` is what
that command prints with `--format json`.

    import driftcheck
    result = driftcheck.check(against="baseline:default", policy="gate.yaml")  # the pre-benchmark gate
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
    from driftcheck.api import (
        BaselineList,
        BenchRequest,
        BenchResult,
        CheckRequest,
        CheckResult,
        ConfirmRequest,
        DiffResult,
        Explained,
        ExplainResult,
        ExportRequest,
        FleetResult,
        GcResult,
        MachineState,
        Policy,
        PrometheusServer,
        Restored,
        RunHistory,
        SavedBaseline,
        ScheduleStatus,
        Shown,
        ShownBaseline,
        SlurmHealth,
        SlurmHealthRequest,
        Snapshot,
        SnapshotDiff,
        SnapshotLog,
        SnapshotRequest,
        Verified,
        bench,
        bisect,
        check,
        diff,
        explain,
        export_nfd,
        export_prometheus,
        fleet,
        gc,
        import_reports,
        list_baselines,
        load,
        log,
        record,
        remove_baseline,
        report,
        restore,
        restore_export,
        restore_plan,
        run,
        run_history,
        run_record,
        save_baseline,
        schedule_install,
        schedule_remove,
        schedule_status,
        show,
        show_baseline,
        slurm_health,
        take_snapshot,
        trial,
        trial_plan,
        variant,
        verify,
    )

if not TYPE_CHECKING:  # hidden from type checkers, so a misspelt name stays an error for them

    def __getattr__(name: str) -> Any:
        # One table of where each name lives: driftcheck.api's, which imports a verb's module on first use.
        if name not in _FACE:
            raise AttributeError(f"module 'driftcheck' has no attribute {name!r}")
        return getattr(importlib.import_module("driftcheck.api"), name)


__all__ = ["BenchRequest", "CheckRequest", "CheckResult", "ConfirmRequest", "DiffResult", "DriftcheckError",
           "ExplainResult", "Explained", "HostError", "OptionError", "Policy", "Shown", "Snapshot", "SnapshotDiff",
           "SnapshotError", "SnapshotLog", "SnapshotRequest", "TamperedSnapshotError", "UnknownSnapshotError",
           "UsageError", "Verified", "__version__", "check", "diff", "explain", "import_reports", "load", "log",
           "record", "report", "show", "take_snapshot", "verify"]
# the gate's baselines and the benchmarks
__all__ += ["BaselineList", "BenchResult", "SavedBaseline", "ShownBaseline", "bench", "list_baselines",
            "remove_baseline", "save_baseline", "show_baseline"]
# runs, trials and fleets
__all__ += ["FleetResult", "GcResult", "RunHistory", "ScheduleStatus", "bisect", "fleet", "gc", "run", "run_history",
            "run_record", "schedule_install", "schedule_remove", "schedule_status", "trial", "trial_plan", "variant"]
# where operators look
__all__ += ["ExportRequest", "MachineState", "PrometheusServer", "SlurmHealth", "SlurmHealthRequest", "export_nfd",
            "export_prometheus", "slurm_health"]
# rebuilding a snapshot's Python environment
__all__ += ["Restored", "restore", "restore_export", "restore_plan"]

# what the face re-exports from driftcheck.api: every name of __all__ this module does not define itself
_FACE = frozenset(__all__) - globals().keys()
