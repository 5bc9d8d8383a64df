"""N independent runs of a suite, combined into one record that knows its between-run spread.

Each run is its own child interpreter (`driftcheck.baselines.one_run`, through the child protocol of
`driftcheck.hosts.child`): its own torch import, thread pool, allocations, warm-up and
calibration, as a later run of the user's would have.
Runs inside one process share all of that and agree with each other more than two days do.
The record keeps every run's median of every benchmark (`runs`), the spread between them
(`between_runs`), and the within-run figures of the median run (n, CI, samples) beside them.

A disturbed run (`driftcheck.baselines.disturbance`) is repeated once, for at most half as many
extra runs as asked for; an undisturbed repeat replaces it, else the less disturbed of the two stays,
flagged.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import cast

from driftcheck.baselines.deps import BenchDependencyError, require_torch
from driftcheck.baselines.record import BenchEntry, BenchRecord, BetweenRuns, RunMedian
from driftcheck.errors import DriftcheckError, UsageError
from driftcheck.hosts.child import ChildDied, ChildFailed, ChildTimeout, call

RunFn = Callable[[], BenchRecord]
RunProgress = Callable[[str], None]
# A child that takes longer than its suite budget by this much has hung (a wedged driver).
_CHILD_SLACK_S = 300.0


def child_run(suite: str, device: str, budget_s: float | None, only: Sequence[str] | None,
              timeout_s: float) -> RunFn:
    """A function that performs one run in a fresh child interpreter and returns its data."""
    spec = {"suite": suite, "device": device, "budget_s": budget_s, "only": list(only or [])}

    def run() -> BenchRecord:
        try:
            data = call("driftcheck.baselines.one_run", spec, timeout_s)
        except ChildTimeout:
            raise DriftcheckError(f"a benchmark run did not finish within {timeout_s:.0f} s") from None
        except ChildDied as exc:
            raise DriftcheckError(f"benchmark run: {exc}") from None
        except ChildFailed as exc:
            raise _raised_in_child(exc) from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise DriftcheckError("a benchmark run printed no result")
        # The child is driftcheck's own runner (driftcheck.baselines.runner), which writes this shape.
        return cast(BenchRecord, data)

    return run


def _raised_in_child(exc: ChildFailed) -> DriftcheckError:
    """The error to raise here for what a run raised in its child: the same kind, where driftcheck has one."""
    if exc.type_name == BenchDependencyError.__name__:
        return BenchDependencyError(str(exc))
    if exc.exit_code is None:  # not a driftcheck error: a crash of the benchmark
        return DriftcheckError(f"benchmark run: {exc.type_name}: {exc}")
    return (UsageError if exc.exit_code == 2 else DriftcheckError)(f"benchmark run: {exc}")


def _disturbed(run: BenchRecord) -> str | None:
    report = run.get("disturbance")
    return report.get("disturbed") if isinstance(report, dict) else None


def _taken(run: BenchRecord) -> float:
    report = run.get("disturbance") or {}
    taken = report.get("taken")
    return float(taken) if isinstance(taken, (int, float)) else math.inf


def repeated_runs(run: RunFn, runs: int, progress: RunProgress | None = None,
                  numbered: tuple[int, int] | None = None) -> list[BenchRecord]:
    """`runs` runs of `run`, each disturbed one repeated once (at most runs // 2 repeats, at least 1).
    `numbered` (first number, total): how progress counts these runs when they add to earlier ones."""
    if runs < 1:
        raise UsageError("--runs must be at least 1")
    first, total = numbered or (1, runs)
    done: list[BenchRecord] = []
    for index in range(runs):
        started = time.monotonic()
        data = run()
        data["run_wall_s"] = round(time.monotonic() - started, 3)
        done.append(data)
        if progress:
            progress(_progress_line(first + index, total, data))
    repeats_left = max(1, runs // 2)
    for index, data in enumerate(done):
        reason = _disturbed(data)
        if reason is None or repeats_left == 0:
            continue
        repeats_left -= 1
        if progress:
            progress(f"run {first + index} was disturbed ({reason}); repeating it once")
        started = time.monotonic()
        again = run()
        again["run_wall_s"] = round(time.monotonic() - started, 3)
        keep = again if _disturbed(again) is None or _taken(again) < _taken(data) else data
        keep = keep.copy()
        keep["repeat"] = {"of_run": first + index, "first_disturbance": reason,
                          "kept": "repeat" if keep is not data else "first"}
        done[index] = keep
    return done


def _progress_line(index: int, runs: int, data: BenchRecord) -> str:
    line = f"run {index}/{runs}: {len(data.get('results') or {})} benchmarks in {data.get('run_wall_s', 0):.1f} s"
    reason = _disturbed(data)
    return line + (f" (disturbed: {reason})" if reason else "")


def _run_figure(entry: BenchEntry, data: BenchRecord) -> RunMedian:
    median = float(entry["median"])
    ci_rel = max(median - float(entry["ci_low"]), float(entry["ci_high"]) - median) / abs(median) if median else 0.0
    report = data.get("disturbance") or {}
    return {"median": median, "n": entry.get("n"), "ci_rel": round(ci_rel, 5),
            "disturbed": report.get("disturbed"), "taken": report.get("taken"),
            "threads": entry.get("threads"), "control": entry.get("control")}


def between_runs(medians: Sequence[float]) -> BetweenRuns:
    """The spread of run medians: count, standard deviation of their logs (as ±%), min and max."""
    positive = [m for m in medians if m > 0]
    spread = statistics.stdev(math.log(m) for m in positive) if len(positive) > 1 else None
    return {"n_runs": len(medians), "spread_pct": None if spread is None else round((math.exp(spread) - 1) * 100, 3),
            "min": min(medians) if medians else None, "max": max(medians) if medians else None}


def combine(runs: list[BenchRecord], looks: Sequence[int] | None = None) -> BenchRecord:
    """One record from several runs' data (see the module docstring); one run gives it back, annotated.
    `looks`: the run counts at which a check planned to look (driftcheck.api.bench), kept in the
    record and, counted in the runs that measured it, in each benchmark's entry."""
    if not runs:
        raise ValueError("no runs to combine")
    first = runs[0]
    combined = first.copy()
    combined.pop("results", None)
    combined.pop("run_wall_s", None)
    combined.pop("repeat", None)
    names = sorted({name for data in runs for name in data["results"]})
    results: dict[str, BenchEntry] = {}
    for name in names:
        present = [(data["results"][name], data) for data in runs if name in data["results"]]
        ordered = sorted(present, key=lambda pair: float(pair[0]["median"]))
        # The within-run figures (n, CI, samples) of the run whose median is the median run's.
        middle = ordered[(len(ordered) - 1) // 2][0].copy()
        medians = [float(entry["median"]) for entry, _ in present]
        middle["median"] = statistics.median(medians)
        middle["runs"] = [_run_figure(entry, data) for entry, data in present]
        middle["between_runs"] = between_runs(medians)
        if looks and len(looks) > 1:
            middle["looks"] = [sum(1 for data in runs[:n] if name in data["results"]) for n in looks]
        results[name] = middle
    combined["results"] = results
    combined["runs"] = len(runs)
    if looks and len(looks) > 1:
        combined["looks"] = list(looks)
    combined["elapsed_s"] = round(sum(float(d.get("elapsed_s") or 0.0) for d in runs), 3)
    combined["skipped"] = sorted({name for d in runs for name in d.get("skipped") or []} - set(names))
    combined["warnings"] = sorted({w for d in runs for w in d.get("warnings") or []})
    combined["run_reports"] = [{"elapsed_s": d.get("elapsed_s"), "wall_s": d.get("run_wall_s"),
                                "machine_load": d.get("machine_load"), "disturbance": d.get("disturbance"),
                                "repeat": d.get("repeat")} for d in runs]
    combined["disturbed_runs"] = [i + 1 for i, d in enumerate(runs) if _disturbed(d)]
    if isinstance(first.get("control"), dict):
        # What the control cost over all runs (driftcheck.baselines.control): its share of the suite's time.
        combined["control"] = {**first["control"], "seconds": round(sum(
            float((d.get("control") or {}).get("seconds") or 0.0) for d in runs), 3)}
    return combined


def run_repeated(suite: str, device: str, runs: int, budget_s: float | None = None,
                 only: Sequence[str] | None = None, progress: RunProgress | None = None) -> BenchRecord:
    """`runs` independent runs of `suite` (each in a child interpreter), combined into one record."""
    if runs < 1:
        raise UsageError("--runs must be at least 1")
    return combine(repeated_runs(suite_run(suite, device, budget_s, only), runs, progress))


def suite_run(suite: str, device: str, budget_s: float | None = None, only: Sequence[str] | None = None) -> RunFn:
    """One run of `suite` in a child interpreter, checked first: torch is there, the suite and device exist."""
    if budget_s is not None and budget_s <= 0:
        raise UsageError("--budget-s must be positive")
    from driftcheck.baselines.plans import SUITE_BUDGET_S
    from driftcheck.baselines.suites import DEVICES, SUITES

    require_torch()
    if suite not in SUITES:
        raise UsageError(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose from {', '.join(DEVICES)}")
    longest = budget_s if budget_s is not None else max(b[suite] for b in SUITE_BUDGET_S.values())
    return child_run(suite, device, budget_s, only, longest + _CHILD_SLACK_S)


def joined(first: BenchRecord, more: BenchRecord) -> BenchRecord:
    """The record of `first`'s runs and then `more`'s (each a `combine` record), as `combine` of all their runs
    would give it, keeping the looks `first` planned. A check joins its first look to the runs it took where
    that look left a benchmark undecided.

    Per benchmark, the run figures, median, spread and looks are those of all runs; the within-run figures
    (n, CI, samples) are those of whichever record's middle run lies nearest the middle run of all (its own
    run when it is one of the two: a record keeps only its middle run whole)."""
    first_runs = int(first.get("runs") or 1)
    names = sorted(set(first["results"]) | set(more["results"]))
    results = {name: _joined_entry(first["results"].get(name), more["results"].get(name), first.get("looks"))
               for name in names}
    combined = first.copy()
    combined["results"] = results
    combined["runs"] = first_runs + int(more.get("runs") or 1)
    combined["elapsed_s"] = round(float(first.get("elapsed_s") or 0.0) + float(more.get("elapsed_s") or 0.0), 3)
    combined["skipped"] = sorted(set(first.get("skipped") or []) | set(more.get("skipped") or []) - set(names))
    combined["warnings"] = sorted(set(first.get("warnings") or []) | set(more.get("warnings") or []))
    combined["run_reports"] = [*(first.get("run_reports") or []), *(more.get("run_reports") or [])]
    combined["disturbed_runs"] = [*(first.get("disturbed_runs") or []),
                                  *(first_runs + index for index in more.get("disturbed_runs") or [])]
    if isinstance(first.get("control"), dict):
        combined["control"] = {**first["control"], "seconds": round(
            float(first["control"].get("seconds") or 0.0) + float((more.get("control") or {}).get("seconds") or 0.0),
            3)}
    return combined


def _middle_median(entry: BenchEntry) -> float:
    """The median of the run whose figures `entry` carries: the middle one of its runs."""
    medians = sorted(float(run["median"]) for run in entry["runs"])
    return medians[(len(medians) - 1) // 2]


def _joined_entry(first: BenchEntry | None, more: BenchEntry | None, looks: list[int] | None) -> BenchEntry:
    """One benchmark's entry over both records' runs (see `joined`)."""
    present = [entry for entry in (first, more) if entry is not None]
    figures = [run for entry in present for run in entry["runs"]]
    medians = [float(run["median"]) for run in figures]
    middle_of_all = sorted(medians)[(len(medians) - 1) // 2]
    nearest = min(present, key=lambda entry: abs(_middle_median(entry) - middle_of_all))
    entry = nearest.copy()
    entry["median"] = statistics.median(medians)
    entry["runs"] = figures
    entry["between_runs"] = between_runs(medians)
    if looks and len(looks) > 1:
        entry["looks"] = [len(first["runs"]) if first is not None else 0, len(figures)]
    return entry


def merge_records(records: Sequence[BenchRecord]) -> BenchRecord:
    """One record from several records of the same machine taken at different times (each of its own runs, as
    `combine` made it): every benchmark's runs side by side, its median the median of their medians, the run
    reports and disturbed runs numbered in order. What `fleet --bench` keeps of a host measured in rounds."""
    if not records:
        raise ValueError("no records to merge")
    merged = dict(records[0])
    results: dict[str, BenchEntry] = {}
    for name in sorted({name for record in records for name in record.get("results") or {}}):
        entries = [record["results"][name] for record in records if name in (record.get("results") or {})]
        runs = [run for entry in entries for run in entry.get("runs") or []]
        medians = [float(run["median"]) for run in runs]
        entry = entries[0].copy()
        entry.pop("looks", None)
        entry["runs"] = runs
        if medians:
            entry["median"] = statistics.median(medians)
        entry["between_runs"] = between_runs(medians)
        results[name] = entry
    merged["results"] = results
    merged["runs"] = sum(int(record.get("runs") or 1) for record in records)
    merged.pop("looks", None)
    merged["elapsed_s"] = round(sum(float(record.get("elapsed_s") or 0.0) for record in records), 3)
    reports = [report for record in records for report in record.get("run_reports") or []]
    merged["run_reports"] = reports
    merged["disturbed_runs"] = [index + 1 for index, report in enumerate(reports)
                                if (report.get("disturbance") or {}).get("disturbed")]
    return cast(BenchRecord, merged)
