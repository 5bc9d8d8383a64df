"""Whether a check needs more runs: the benchmarks its first look leaves undecided against the reference,
where more runs could decide them.

`check --against REF` reruns the reference's suite with the reference's number of runs. On a noisy machine
three runs a side leave most verdicts `inconclusive`: the pooled t-test on log run medians has 4 degrees of
freedom, so its 1 % critical value is 4.6 standard errors, and one wandering run widens the spread of all.
On the 2-core VM a GEMM that lost 40 % to OMP_NUM_THREADS=1 sat inside an MDS of ±62 % one check in four.
A check that looks at its first runs and, where a benchmark is undecided, takes as many again before
looking once more narrows that MDS (3+6 runs: 7 degrees of freedom and a smaller standard error).

Each look is judged at its share of the level (`driftcheck.stats.looks`). More runs are taken only where
they could decide: a benchmark is undecided (`inconclusive`, measured on both sides, not held by other load)
and at the planned runs its MDS would fall under twice its present shift, or under the 25 % that
`unchanged` needs. The check takes them (driftcheck.api.bench); this module only judges.
"""

from __future__ import annotations

import math

from driftcheck.analysis.bench_verdicts import compare_records
from driftcheck.analysis.sessions import default_between
from driftcheck.baselines.record import BenchRecord
from driftcheck.stats.comparison import Resolution, pooled_mds_log
from driftcheck.stats.looks import Looks
from driftcheck.stats.run_medians import RESOLVED_MDS
from driftcheck.stats.sessions import across_sessions, spread_from_json


def first_look_runs(record: BenchRecord) -> int:
    """The runs a record took before any it took to decide (its first look): what a check that uses the
    record as its reference reruns."""
    looks = record.get("looks")
    if isinstance(looks, list) and looks and isinstance(looks[0], int) and looks[0] > 0:
        return int(looks[0])
    return int(record.get("runs") or 1)


def undecided(reference: BenchRecord, record: BenchRecord, max_runs: int) -> list[str]:
    """The benchmarks of `record` that `max_runs` runs could decide against `reference` and its runs do not."""
    alpha = Looks((max_runs,), len(record.get("looks") or [max_runs])).alpha_each
    device = str(record.get("device") or reference.get("device") or "cpu")
    names = []
    for row in compare_records(reference, record):
        runs = row.get("runs") or [0, 0]
        # Held by other load (`held_by`): more runs under the same load would be held the same way, and
        # a transient load is what the repeat of a disturbed run is for.
        if row.get("verdict") != "inconclusive" or row.get("direction") == "missing" or row.get("held_by") or \
                not row.get("spread_measured") or runs[0] < 1 or runs[1] >= max_runs:
            continue
        spread = math.log1p(float(row.get("spread_pct") or 0.0) / 100.0)
        # More runs narrow the runs' part of the noise, never the host's between sessions.
        between = spread_from_json(row.get("between_sessions")) or default_between(device)
        df = runs[0] + max_runs - 2
        projected = across_sessions(Resolution(spread, df, True, pooled_mds_log(spread, runs[0], max_runs, alpha)),
                                    between, runs[0], max_runs, alpha).mds_log
        # The shift is itself noisy: more runs may confirm one half the projected MDS, or show none at all.
        ratio = row.get("ratio")
        shift = abs(math.log(ratio)) if isinstance(ratio, (int, float)) and ratio > 0 else 0.0
        if shift >= projected / 2.0 or math.expm1(projected) <= RESOLVED_MDS:
            names.append(str(row["name"]))
    return names


def decided_line(runs: int) -> str:
    """What a check says when its first look decided every benchmark it could."""
    return f"every benchmark decided after {runs} runs"


def undecided_line(pending: list[str], runs: int, max_runs: int) -> str:
    """What a check says before it takes more runs for the benchmarks its first look left undecided."""
    shown = ", ".join(pending[:3]) + (f" and {len(pending) - 3} more" if len(pending) > 3 else "")
    return f"undecided after {runs} runs: {shown}; {max_runs - runs} more runs (--max-runs {max_runs})"
