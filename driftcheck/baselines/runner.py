"""Running a suite: build each planned workload in turn, measure it under its share of the budget,
read the device state around it, and collect the `bench` probe's data.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from driftcheck.baselines.calibrate import CalibrationPolicy, Measurement
from driftcheck.baselines.clocks import device_state
from driftcheck.baselines.control import FIGURES, UNITS, ControlMeter, around
from driftcheck.baselines.deps import import_torch
from driftcheck.baselines.disturbance import DisturbanceMeter, throttle_reasons
from driftcheck.baselines.load import OtherLoad, load_report, load_warning
from driftcheck.baselines.plans import SUITE_BUDGET_S, cpu_plan, gpu_plan
from driftcheck.baselines.record import BenchEntry, BenchRecord, ControlEntry, Efficiency
from driftcheck.baselines.references import efficiency, reference_for
from driftcheck.baselines.suites import DEVICES, SUITES
from driftcheck.baselines.workloads import Case
from driftcheck.errors import UsageError
from driftcheck.stats.summary import Summary, summarize

# Every benchmark gets at least this long to measure; the suite skips what is left only once it has run
# past its budget by OVERRUN_FRACTION of it (builds on a busy machine can take longer than the measuring).
MIN_CASE_BUDGET_S = 0.5
OVERRUN_FRACTION = 2.0


def resolve_device(torch: Any, device: str) -> str:
    """`auto` → cuda when torch sees a GPU, else cpu; `cuda` without one is a UsageError."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose from {', '.join(DEVICES)}")
    has_cuda = bool(torch.cuda.is_available())
    if device == "auto":
        return "cuda" if has_cuda else "cpu"
    if device == "cuda" and not has_cuda:
        raise UsageError("--device cuda: torch sees no CUDA device here (torch "
                         f"{torch.__version__}); use --device cpu")
    return device


def result_json(case: Case, measurement: Measurement, before: dict[str, object], after: dict[str, object],
                reference: dict[str, Any] | None, control: ControlEntry | None = None,
                threads: int | None = None) -> dict[str, BenchEntry]:
    """The entries (the case and its derived views) of `probes.bench.data.results` for one measurement:
    `control` is the control measured around it, `threads` the CPU threads it ran on."""
    values = [case.value_of(s) for s in measurement.samples_s]
    summary = summarize(values)

    def entry(unit: str, higher_is_better: bool, samples: list[float], summary: Summary,
              efficiency: Efficiency | None) -> BenchEntry:
        return {"unit": unit, "higher_is_better": higher_is_better, "n": summary.n, "median": summary.median,
                "p10": summary.p10, "p90": summary.p90, "mad": summary.mad, "cv": summary.cv,
                "ci_low": summary.ci_low, "ci_high": summary.ci_high, "samples": samples, "params": case.params,
                "calibration": measurement.report, "clocks_before": before, "clocks_after": after,
                "gpu_index": case.gpu_index, "threads": threads, "control": control, "efficiency": efficiency}

    entries = {case.name: entry(case.unit, case.higher_is_better, values, summary,
                                efficiency(reference, case.peak_kind, summary.median, case.peak_scale))}
    for view in case.derived:
        derived_values = [view.convert(v) for v in values]
        entries[view.name] = entry(view.unit, view.higher_is_better, derived_values, summarize(derived_values), None)
    return entries


ProgressFn = Callable[[str, BenchEntry], None]


def run_suite(suite: str = "quick", device: str = "auto", budget_s: float | None = None,
              only: Sequence[str] | None = None, progress: ProgressFn | None = None) -> BenchRecord:
    """Run a suite; returns the `bench` probe's data (see docs/data-shapes.md).

    `budget_s` replaces the suite's total time budget (small values make a fast smoke run); `only`
    keeps the benchmarks whose name contains one of its strings.
    """
    if suite not in SUITES:
        raise UsageError(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
    if budget_s is not None and budget_s <= 0:
        raise UsageError("--budget-s must be positive")
    torch = import_torch()
    resolved = resolve_device(torch, device)
    started = time.monotonic()
    meter = OtherLoad()
    gpus = list(range(torch.cuda.device_count())) if resolved == "cuda" else []
    disturbance = DisturbanceMeter(gpus=gpus)
    plan = gpu_plan(torch, suite) if resolved == "cuda" else cpu_plan(torch, suite)
    total_budget = budget_s if budget_s is not None else SUITE_BUDGET_S[resolved][suite]
    device_name = torch.cuda.get_device_name(0) if resolved == "cuda" else "cpu"
    reference = reference_for(device_name) if resolved == "cuda" else None
    results: dict[str, BenchEntry] = {}
    skipped: list[str] = []
    remaining_groups = len(plan)
    threads = int(torch.get_num_threads())
    control = ControlMeter()
    control_started = time.monotonic()
    control_last = control.measure()
    control_s = time.monotonic() - control_started
    with torch.inference_mode():
        for build in plan:
            cases = [c for c in build() if not only or any(s in c.name for s in only)]
            remaining_groups -= 1
            left = total_budget - (time.monotonic() - started)
            for index, case in enumerate(cases):
                share = max(left, 0.0) / (remaining_groups + 1) / (len(cases) - index)
                # A benchmark whose turn comes late (after slow builds on a busy machine) still gets a
                # short measurement rather than none, until the suite is far past its budget.
                if left < -OVERRUN_FRACTION * total_budget:
                    skipped += [case.name, *(view.name for view in case.derived)]
                    continue
                policy = CalibrationPolicy(budget_s=max(share, MIN_CASE_BUDGET_S))
                before = device_state(resolved, case.gpu_index)
                case_started = time.monotonic()
                measurement = case.run(policy)
                after = device_state(resolved, case.gpu_index)
                control_started = time.monotonic()
                control_next = control.measure()
                control_s += time.monotonic() - control_started
                batch_s = statistics.median(measurement.samples_s) * int(measurement.report.get("inner") or 1) \
                    if measurement.samples_s else None
                entries = result_json(case, measurement, before, after, reference,
                                      around(control_last, control_next, control.threads, batch_s),
                                      1 if case.single_thread else threads)
                control_last = control_next
                results.update(entries)
                left -= time.monotonic() - case_started
                if progress:
                    for name, entry in entries.items():
                        progress(name, entry)
    machine_load = load_report(meter)
    warning = load_warning(machine_load)
    disturbed = disturbance.report(throttle_reasons(results))
    return {"suite": suite, "device": resolved, "device_name": device_name,
            "torch_version": str(torch.__version__), "threads": threads,
            "budget_s": total_budget, "elapsed_s": round(time.monotonic() - started, 3),
            "reference": reference, "skipped": skipped, "machine_load": machine_load,
            "warnings": [warning] if warning else [], "disturbance": disturbed,
            "control": {"figures": {name: UNITS[name] for name in FIGURES}, "all_cores_threads": control.threads,
                        "seconds": round(control_s, 3)},
            "results": results}
