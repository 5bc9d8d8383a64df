"""More runs while a check cannot decide: a check's benchmark runs, extended once where its first runs could
not call a benchmark against the reference and more runs could.

`check --against REF` reruns the reference's suite with the reference's number of runs. On a noisy machine
three runs a side leave most verdicts `inconclusive`: the pooled t-test on log run medians has 4 degrees of
freedom, so its 1 % critical value is 4.6 standard errors, and one wandering run widens the spread of all.
On the 2-core VM a GEMM that lost 40 % to OMP_NUM_THREADS=1 sat inside an MDS of ±62 % one check in four.
A check that looks at its first runs and, where a benchmark is undecided, takes as many again before
looking once more narrows that MDS (3+6 runs: 7 degrees of freedom and a smaller standard error).

Looking twice at a growing record gives a false alarm two chances, so the record plans its looks before
its first run (`looks`: run counts, e.g. [3, 6]) and each look is judged at 1 % / looks (Bonferroni,
`driftcheck.baselines.verdict.Looks`): the chance that an unchanged benchmark is called at either look
stays under 1 %, whether or not the second look was taken. More runs are taken only where they could
decide: a benchmark is undecided (`inconclusive`, measured on both sides, not held by other load) and at
the planned runs its MDS would fall under twice its present shift, or under the 25 % that `unchanged` needs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from driftcheck.baselines.compare import compare_records
from driftcheck.baselines.repeated import RunFn, RunProgress, combine, repeated_runs
from driftcheck.baselines.verdict import RESOLVED_MDS, Looks
from driftcheck.errors import UsageError
from driftcheck.stats.comparison import pooled_mds_log

# A check takes up to this many times the reference's runs when its first ones cannot decide.
DEFAULT_GROWTH = 2


def default_max_runs(runs: int) -> int:
    """Runs a check may take in all by default: twice the reference's, and never more from a single run
    (one run per side has no spread to project from)."""
    return runs * DEFAULT_GROWTH if runs > 1 else runs


def first_look_runs(record: Mapping[str, Any]) -> int:
    """The runs a record took before any it took to decide (its first look): what a check that uses the
    record as its reference reruns."""
    looks = record.get("looks")
    if isinstance(looks, list) and looks and isinstance(looks[0], int) and looks[0] > 0:
        return int(looks[0])
    return int(record.get("runs") or 1)


def planned_looks(runs: int, max_runs: int) -> tuple[int, ...]:
    """The run counts at which a check looks: after its `runs`, and after `max_runs` when that is more."""
    if max_runs < runs:
        raise UsageError(f"--max-runs ({max_runs}) is under the runs to take ({runs})")
    return (runs,) if max_runs == runs else (runs, max_runs)


def undecided(reference: Mapping[str, Any], record: Mapping[str, Any], max_runs: int) -> list[str]:
    """The benchmarks of `record` that `max_runs` runs could decide against `reference` and its runs do not."""
    alpha = Looks((max_runs,), len(record.get("looks") or [max_runs])).alpha_each
    names = []
    for row in compare_records(reference, record):
        runs = row.get("runs") or [0, 0]
        # Held by other load (`held_by`): more runs under the same load would be held the same way, and
        # a transient load is what the repeat of a disturbed run is for.
        if row.get("verdict") != "inconclusive" or row.get("direction") == "missing" or row.get("held_by") or \
                not row.get("spread_measured") or runs[0] < 1 or runs[1] >= max_runs:
            continue
        spread = math.log1p(float(row.get("spread_pct") or 0.0) / 100.0)
        projected = pooled_mds_log(spread, runs[0], max_runs, alpha)
        # The shift is itself noisy: more runs may confirm one half the projected MDS, or show none at all.
        shift = abs(math.log(float(row["ratio"]))) if isinstance(row.get("ratio"), (int, float)) and row["ratio"] > 0 \
            else 0.0
        if shift >= projected / 2.0 or math.expm1(projected) <= RESOLVED_MDS:
            names.append(str(row["name"]))
    return names


def runs_until_decided(run: RunFn, runs: int, max_runs: int, reference: Mapping[str, Any] | None,
                       progress: RunProgress | None = None) -> tuple[list[dict[str, Any]], tuple[int, ...]]:
    """`runs` runs of `run` (`driftcheck.baselines.repeated.repeated_runs`), then, where the reference's
    benchmarks are undecided and more runs could decide them, up to `max_runs` in all; with the looks planned.
    Without a reference (nothing to decide against) the runs are taken once, as asked."""
    looks = planned_looks(runs, max_runs) if reference is not None else (runs,)
    done = repeated_runs(run, runs, progress)
    if len(looks) == 1 or reference is None:
        return done, looks
    pending = undecided(reference, combine(done, looks), max_runs)
    if not pending:
        if progress:
            progress(f"every benchmark decided after {runs} runs")
        return done, looks
    if progress:
        shown = ", ".join(pending[:3]) + (f" and {len(pending) - 3} more" if len(pending) > 3 else "")
        progress(f"undecided after {runs} runs: {shown}; {max_runs - runs} more runs (--max-runs {max_runs})")
    done += repeated_runs(run, max_runs - runs, progress, numbered=(runs + 1, max_runs))
    return done, looks


def record_until_decided(run: RunFn, runs: int, max_runs: int, reference: Mapping[str, Any] | None,
                         progress: RunProgress | None = None) -> dict[str, Any]:
    """`runs_until_decided`, combined into one record that keeps its planned looks."""
    done, looks = runs_until_decided(run, runs, max_runs, reference, progress)
    return combine(done, looks)
