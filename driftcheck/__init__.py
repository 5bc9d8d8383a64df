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
    from driftcheck.analysis.diff import SnapshotDiff
    from driftcheck.analysis.explain import Explained
    from driftcheck.analysis.gate import CheckResult
    from driftcheck.analysis.policy import Policy
    from driftcheck.api import (
        BaselineList,
        BenchRequest,
        BenchResult,
        CheckRequest,
        ConfirmRequest,
        DiffResult,
        ExplainResult,
        SavedBaseline,
        Shown,
        ShownBaseline,
        SnapshotLog,
        SnapshotRequest,
        Verified,
        bench,
        check,
        diff,
        explain,
        import_reports,
        list_baselines,
        load,
        log,
        record,
        remove_baseline,
        report,
        save_baseline,
        show,
        show_baseline,
        take_snapshot,
        verify,
    )
    from driftcheck.api.bisect import bisect
    from driftcheck.api.export import ExportRequest, MachineState, PrometheusServer, export_nfd, export_prometheus
    from driftcheck.api.fleet import FleetResult, fleet
    from driftcheck.api.gc import GcResult, gc
    from driftcheck.api.restore import Restored, restore, restore_export, restore_plan
    from driftcheck.api.run import run
    from driftcheck.api.runs import RunHistory, run_history, run_record
    from driftcheck.api.schedule import ScheduleStatus, schedule_install, schedule_remove, schedule_status
    from driftcheck.api.slurm_health import SlurmHealth, SlurmHealthRequest, slurm_health
    from driftcheck.api.trial import trial, trial_plan, variant
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
    # the gate's baselines and the benchmarks
    "bench": "driftcheck.api", "BenchResult": "driftcheck.api", "save_baseline": "driftcheck.api",
    "list_baselines": "driftcheck.api", "show_baseline": "driftcheck.api", "remove_baseline": "driftcheck.api",
    "SavedBaseline": "driftcheck.api", "ShownBaseline": "driftcheck.api", "BaselineList": "driftcheck.api",
    # runs, trials and fleets: each from its own module of the face, so a verb pays only for what it uses
    "run": "driftcheck.api.run", "run_history": "driftcheck.api.runs", "run_record": "driftcheck.api.runs",
    "RunHistory": "driftcheck.api.runs", "trial": "driftcheck.api.trial", "trial_plan": "driftcheck.api.trial",
    "variant": "driftcheck.api.trial", "bisect": "driftcheck.api.bisect", "fleet": "driftcheck.api.fleet",
    "FleetResult": "driftcheck.api.fleet", "gc": "driftcheck.api.gc", "GcResult": "driftcheck.api.gc",
    "schedule_install": "driftcheck.api.schedule", "schedule_remove": "driftcheck.api.schedule",
    "schedule_status": "driftcheck.api.schedule", "ScheduleStatus": "driftcheck.api.schedule",
    # where operators look: Prometheus, NFD, a Slurm health check (prometheus_client only when asked)
    "export_prometheus": "driftcheck.api.export", "export_nfd": "driftcheck.api.export",
    "ExportRequest": "driftcheck.api.export", "MachineState": "driftcheck.api.export",
    "PrometheusServer": "driftcheck.api.export", "slurm_health": "driftcheck.api.slurm_health",
    "SlurmHealth": "driftcheck.api.slurm_health", "SlurmHealthRequest": "driftcheck.api.slurm_health",
    # rebuilding a snapshot's Python environment, and its exports
    "restore": "driftcheck.api.restore", "restore_plan": "driftcheck.api.restore",
    "restore_export": "driftcheck.api.restore", "Restored": "driftcheck.api.restore",
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
