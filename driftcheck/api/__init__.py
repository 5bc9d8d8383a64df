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

import importlib
import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from driftcheck.analysis.diff import SnapshotDiff
    from driftcheck.analysis.explain import Explained
    from driftcheck.analysis.gate import CheckResult
    from driftcheck.analysis.policy import Policy
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
    from driftcheck.api.bisect import bisect
    from driftcheck.api.check import DEFAULT_MIN_CONFIDENCE, CheckRequest, bench_rerun, check
    from driftcheck.api.compare import DiffResult, diff
    from driftcheck.api.confirm import ConfirmRequest
    from driftcheck.api.explain import ExplainResult, explain
    from driftcheck.api.export import ExportRequest, MachineState, PrometheusServer, export_nfd, export_prometheus
    from driftcheck.api.fleet import FleetResult, fleet
    from driftcheck.api.gc import GcResult, gc
    from driftcheck.api.importing import STDIN, import_reports
    from driftcheck.api.loading import load
    from driftcheck.api.log import SnapshotLog, log
    from driftcheck.api.record import record
    from driftcheck.api.report import report
    from driftcheck.api.restore import Restored, restore, restore_export, restore_plan
    from driftcheck.api.run import run
    from driftcheck.api.runs import RunHistory, run_history, run_record
    from driftcheck.api.schedule import ScheduleStatus, schedule_install, schedule_remove, schedule_status
    from driftcheck.api.show import Shown, show
    from driftcheck.api.slurm_health import SlurmHealth, SlurmHealthRequest, slurm_health
    from driftcheck.api.snapshot import (
        SnapshotRequest,
        hash_cache_note,
        keep_snapshot,
        server_probe_note,
        take_snapshot,
    )
    from driftcheck.api.trial import trial, trial_plan, variant
    from driftcheck.api.trial_options import DEFAULT_READY_TIMEOUT_S, check_trial_options
    from driftcheck.api.verify import Verified, verify
    from driftcheck.probes.base import BenchRequest, ProbeOptions
    from driftcheck.probes.runner import ProbeOutcome
    from driftcheck.snapshot.model import Snapshot

# name -> module that defines it, imported on first use: `driftcheck show` imports the verb it runs (its
# loader, its trust check), not every verb's engine (explain's rules, the probes, the benchmarks, the importers).
_LAZY = {
    "SnapshotDiff": "driftcheck.analysis.diff", "Explained": "driftcheck.analysis.explain",
    "CheckResult": "driftcheck.analysis.gate", "BaselineList": "driftcheck.api.baseline",
    "SavedBaseline": "driftcheck.api.baseline", "ShownBaseline": "driftcheck.api.baseline",
    "list_baselines": "driftcheck.api.baseline", "remove_baseline": "driftcheck.api.baseline",
    "save_baseline": "driftcheck.api.baseline", "show_baseline": "driftcheck.api.baseline",
    "BenchResult": "driftcheck.api.bench", "bench": "driftcheck.api.bench",
    "DEFAULT_MIN_CONFIDENCE": "driftcheck.api.check", "CheckRequest": "driftcheck.api.check",
    "bench_rerun": "driftcheck.api.check", "check": "driftcheck.api.check", "DiffResult": "driftcheck.api.compare",
    "diff": "driftcheck.api.compare", "load": "driftcheck.api.loading",
    "DEFAULT_READY_TIMEOUT_S": "driftcheck.api.trial_options", "ConfirmRequest": "driftcheck.api.confirm",
    "check_trial_options": "driftcheck.api.trial_options", "ExplainResult": "driftcheck.api.explain",
    "explain": "driftcheck.api.explain", "STDIN": "driftcheck.api.importing",
    "import_reports": "driftcheck.api.importing", "SnapshotLog": "driftcheck.api.log", "log": "driftcheck.api.log",
    "record": "driftcheck.api.record", "report": "driftcheck.api.report", "Shown": "driftcheck.api.show",
    "show": "driftcheck.api.show", "SnapshotRequest": "driftcheck.api.snapshot",
    "hash_cache_note": "driftcheck.api.snapshot", "keep_snapshot": "driftcheck.api.snapshot",
    "server_probe_note": "driftcheck.api.snapshot",
    "take_snapshot": "driftcheck.api.snapshot", "Verified": "driftcheck.api.verify", "verify": "driftcheck.api.verify",
    "BenchRequest": "driftcheck.probes.base", "ProbeOptions": "driftcheck.probes.base",
    # what a progress callback of take_snapshot/check receives, one probe at a time
    "ProbeOutcome": "driftcheck.probes.runner",
    "Snapshot": "driftcheck.snapshot.model", "Policy": "driftcheck.analysis.policy",
    # runs, trials and fleets: each from its own module, so a verb pays only for what it uses
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

if not TYPE_CHECKING:  # hidden from type checkers, which see the imports above

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'driftcheck.api' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later uses are plain attribute reads
        return value


class _Face(types.ModuleType):
    """This package, where a verb's function keeps its name over the submodule that defines it.

    Importing `driftcheck.api.show` makes the import system bind the module to the name `show` here, which
    would hide the function `show` from `api.show(...)`. When every verb was imported eagerly, the function
    was bound last and won; the binding below keeps that, whatever imports a verb's module first."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Face


__all__ = ["DEFAULT_MIN_CONFIDENCE", "DEFAULT_READY_TIMEOUT_S", "STDIN", "BaselineList", "BenchRequest", "BenchResult",
           "CheckRequest", "CheckResult", "ConfirmRequest", "DiffResult", "ExplainResult", "Explained", "ProbeOptions",
           "ProbeOutcome", "SavedBaseline", "Shown", "ShownBaseline", "Snapshot", "SnapshotDiff", "SnapshotLog",
           "SnapshotRequest", "Verified", "bench", "bench_rerun", "check", "check_trial_options", "diff", "explain",
           "hash_cache_note", "import_reports", "keep_snapshot", "list_baselines", "load", "log", "record",
           "remove_baseline", "report", "save_baseline", "server_probe_note", "show", "show_baseline", "take_snapshot",
           "verify"]
# runs, trials, fleets, operators' exports, restore (the root package's face names them too)
__all__ += ["ExportRequest", "FleetResult", "GcResult", "MachineState", "Policy", "PrometheusServer", "Restored",
            "RunHistory", "ScheduleStatus", "SlurmHealth", "SlurmHealthRequest", "bisect", "export_nfd",
            "export_prometheus", "fleet", "gc", "restore", "restore_export", "restore_plan", "run", "run_history",
            "run_record", "schedule_install", "schedule_remove", "schedule_status", "slurm_health", "trial",
            "trial_plan", "variant"]
