"""Sensitivity of the verdicts against the past: false alarms on an unchanged machine with and without a
busy core, and detection of OMP_NUM_THREADS=1, each counted on raw and on control-normalised figures.

Every record is what `baseline save --bench quick` / `check --against` store: N independent runs, each a
child interpreter running the suite (`driftcheck.baselines.runner.run_suite`, which measures the control
around every benchmark), a disturbed run repeated once (`driftcheck.baselines.repeated.repeated_runs`),
combined, and compared by `driftcheck.analysis.bench_verdicts.compare_records`, the code check/explain use.
A check's record is taken as `check` takes it (`driftcheck.api.bench.decided_record`): where
its first N runs leave a benchmark undecided against the baseline and more could decide it, up to
`--max-runs` (check's default, 2N) in all, each of its two looks judged at 0.5 %; `--max-runs N` gives the
figure without that extension. A record's first N runs are what the next pair uses as its baseline.
"Raw" is the same comparison with the control taken out of both records (what a record without a
control gets); "normalised" is the verdict as check gives it now (driftcheck.baselines.control).

1. Unchanged: a chain of `--pairs P` + 1 records on the unchanged machine; each record with its
   successor is a pair (baseline, check). A real `while True: pass` pinned to the first CPU runs during
   every other record, so half the pairs have it on the check's side and half on the baseline's side.
   A `slower` or `faster` verdict there is a false alarm (target: <= 5% of verdicts); `inconclusive` is
   allowed. Printed per benchmark and per pair kind (quiet / busy check / busy baseline), raw and
   normalised, with the control's change.
2. Injected, `--trials T` each (`--inject`, default `threads`), against the quiet records of the chain:
   - `threads`: OMP_NUM_THREADS=1 in the check's runs. Caught = the check calls some benchmark `slower`
     (it fails); target >= 95% of trials. Per benchmark: share of `slower` verdicts.
   - `work`: the GEMM and skinny GEMM do (1 + 2·MDS) times their nominal work, reported as nominal.
Run it alone on the machine (`--runs 3 --budget-s 2`, the defaults): `python benchmarks/sensitivity.py`
takes 40 pairs (41 records, 20 of them with the busy core and ~1 repeated run each) and 20 OMP trials:
61 records · 3 runs + ~20 repeats ≈ 200 runs; at the end it prints the median run's wall time and what a
full run takes at it (~7 s a run alone on the 2-core VM: ~25 min). `--quick` is a smoke run (2 pairs,
1 trial, 2 runs: a few minutes), not a measurement; it prints the same projection.

3. Apart (`--apart S`, `--apart-pairs P`, default 40): P + 1 unchanged records, each started S seconds after
   the previous one started (each run a fresh benchmark process, as always), no busy core; each with its
   predecessor is a pair. Issue 36 saw a false `faster` on a record two minutes after its baseline, which
   back-to-back records cannot show. False verdicts are printed for back-to-back and apart pairs separately.
   Every check's record carries the between-session spread measured from the quiet records before it, as
   `check` carries the store's sessions (driftcheck.analysis.sessions): the chain's for the chain, the apart
   records' for the apart pairs (fewer than 3 so far: the stated default); the spread each measured per
   benchmark is printed. The OMP trials then run against the apart records, with their measured spread.
   The issue's target (false slower/faster <= 5 % of >= 40 apart checks >= 2 minutes apart, OMP_NUM_THREADS=1
   caught in >= 95 % of >= 20) needs the machine alone for well over an hour:
   `python benchmarks/sensitivity.py --pairs 0 --apart 120 --apart-pairs 40 --trials 20 --no-busy
   --trials-in-waits` (the OMP trials taken in the waits, each before the wait's end, never during an apart
   record: ~85 min instead of ~100).
   It does not vary the CPU placement of the runs beyond what the scheduler gives a fresh process.

Beside the raw and normalised figures it prints "first look only": the same pairs judged on the check's first
N runs at one look at 1 %, what check gave before it took more runs when undecided (the same records, so
the two figures differ only by the extension). `--save FILE` writes every record's runs; `--replay FILE`
judges them again (same arguments) without taking any, e.g. after a change of the verdict rules.

Run from the repository root: `python benchmarks/sensitivity.py [--quick] [--pairs 40] [--trials 20]
[--runs 3] [--max-runs 6] [--budget-s 2] [--save FILE | --replay FILE] [--only gemm ...]
[--inject threads,work] [--no-busy] [--apart S] [--apart-pairs P]`.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.analysis.bench_verdicts import compare_records, higher_is_better  # noqa: E402
from driftcheck.analysis.sessions import between_sessions  # noqa: E402
from driftcheck.api.bench import decided_record  # noqa: E402
from driftcheck.baselines.repeated import combine, repeated_runs  # noqa: E402
from driftcheck.stats.looks import default_max_runs, planned_looks  # noqa: E402
from driftcheck.store.sessions import BenchSession  # noqa: E402

CHILD = """
import functools, json, sys
from driftcheck.baselines import plans, workloads
from driftcheck.baselines.runner import run_suite
spec = json.loads(sys.argv[1])
factor = float(spec.get("work_factor", 1.0))
if factor != 1.0:
    # The injected slowdown: more arithmetic and weight traffic per operation, reported as the nominal work.
    plans.gemm_case = functools.partial(workloads.gemm_case, work_factor=factor)
    plans.skinny_case = functools.partial(workloads.skinny_case, work_factor=factor)
print(json.dumps(run_suite(spec["suite"], "cpu", spec["budget_s"], spec["only"] or None), default=str))
"""
BUSY_LOOP = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\nwhile True: pass"
SHIFTS = ("slower", "faster")
FIRST = "first look only"
KINDS = ("quiet", "busy check", "busy baseline", "apart")


WALL_S: list[float] = []  # every run's wall time, for the projection of a full run


def one_run(args: argparse.Namespace, env: dict[str, str] | None = None, work_factor: float = 1.0) -> dict[str, Any]:
    spec = {"suite": "quick", "budget_s": args.budget_s, "only": args.only or [], "work_factor": work_factor}
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                          env=full_env, check=True, timeout=900)
    WALL_S.append(time.monotonic() - started)
    return dict(json.loads(done.stdout))


@contextmanager
def busy_core(active: bool) -> Iterator[None]:
    """A real busy loop pinned to the first CPU while the block runs (nothing when not `active`)."""
    competitor = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if active else None
    try:
        yield
    finally:
        if competitor is not None:
            competitor.kill()
            competitor.wait()


def with_history(data: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
    """`data` carrying the between-session spreads that `history` (earlier records of the same unchanged state,
    one session each) measures, as `check` carries those of the store's sessions."""
    sessions = [BenchSession("unchanged", str(index), "", name,
                             {"higher_is_better": entry.get("higher_is_better"), "runs": entry["runs"]})
                for index, past in enumerate(history) for name, entry in past["results"].items() if entry.get("runs")]
    return {**data, "between_sessions": between_sessions(sessions)}


class Taken:
    """One record's runs: its first `args.runs` are what `baseline save` stores; all of them, with the looks
    planned, what `check --against` compares (more runs where the first ones left a benchmark undecided),
    carrying the between-session spread `history` measures."""

    def __init__(self, runs: list[dict[str, Any]], looks: tuple[int, ...], history: list[dict[str, Any]]) -> None:
        self.runs, self.looks = runs, looks
        self.baseline = combine(runs[:looks[0]])
        self.check = with_history(combine(runs, looks), history)

    @property
    def extended(self) -> bool:
        return len(self.runs) > self.looks[0]


EXTENDED: list[int] = []  # runs each check took
TAKEN: list[dict[str, Any]] = []  # every record's runs and looks, in order, for --save
REPLAY: list[dict[str, Any]] = []  # --replay: saved records, taken in their order instead of running


def record(args: argparse.Namespace, env: dict[str, str] | None = None, work_factor: float = 1.0,
           busy: bool = False, reference: dict[str, Any] | None = None,
           history: list[dict[str, Any]] | None = None) -> Taken:
    """One record of `args.runs` runs, as `baseline save` takes it (a disturbed run repeated once); against a
    `reference`, as `check` takes it: up to `args.max_runs` where the first runs leave a benchmark undecided,
    judged with the between-session spread of `history`."""
    history = history or []
    looks: tuple[int, ...]
    if REPLAY:
        saved = REPLAY.pop(0)
        if saved["env"] != (env or {}) or saved["busy"] != busy:
            raise SystemExit("sensitivity: the saved records were taken with other arguments")
        runs, looks = saved["runs"], tuple(saved["looks"])
        if reference is not None:
            EXTENDED.append(len(runs))
        return Taken(runs, looks, history)
    with busy_core(busy):
        if reference is None:
            runs, looks = repeated_runs(lambda: one_run(args, env, work_factor), args.runs), (args.runs,)
        else:
            runs, looks = until_decided(lambda: one_run(args, env, work_factor), args, reference, history)
            EXTENDED.append(len(runs))
    TAKEN.append({"env": env or {}, "work_factor": work_factor, "busy": busy, "looks": list(looks), "runs": runs})
    return Taken(runs, looks, history)


def until_decided(run: Callable[[], dict[str, Any]], args: argparse.Namespace, reference: dict[str, Any],
                  history: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], tuple[int, ...]]:
    """A check's runs as `check` takes them (driftcheck.api.bench.decided_record), each run kept for --save."""
    looks = planned_looks(args.runs, args.max_runs)
    first = repeated_runs(run, args.runs)
    more: list[dict[str, Any]] = []

    def take_more(count: int, taken: int) -> dict[str, Any]:
        more.extend(repeated_runs(run, count, numbered=(taken + 1, taken + count)))
        return combine(more)

    decided_record(with_history(combine(first, looks), history), take_more, args.runs, args.max_runs, reference)
    return first + more, looks


def without_control(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as a record from before the control existed: the raw verdicts."""
    bare = copy.deepcopy(data)
    for result in bare["results"].values():
        result.pop("control", None)
        for run in result.get("runs") or []:
            run.pop("control", None)
    return bare


def both(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(raw rows, normalised rows) of one pair."""
    return compare_records(without_control(a), without_control(b)), compare_records(a, b)


def others(data: dict[str, Any]) -> list[float]:
    return [float((r.get("disturbance") or {}).get("other_cpu_cores") or 0.0) for r in data["run_reports"]]


def rate(hits: int, total: int) -> str:
    return f"{hits}/{total} = {100.0 * hits / max(total, 1):.1f}%"


class Tally:
    """Verdict counts per benchmark and per pair kind, raw and normalised."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], dict[str, int]] = {}
        # per check (a pair): (checks with some false slower/faster, checks) by figure and kind
        self.checks: dict[tuple[str, str], list[int]] = {}
        self.control: dict[str, list[float]] = {}

    def add(self, kind: str, raw: list[dict[str, Any]], normalised: list[dict[str, Any]],
            first: list[dict[str, Any]]) -> None:
        """One pair's rows: raw, normalised (check's verdict) and `first` (check's verdict on its first look
        alone, one look at 1 %: what check gave before it took more runs when undecided)."""
        for figure, rows in (("raw", raw), ("normalised", normalised), (FIRST, first)):
            for row in rows:
                counts = self.counts.setdefault((figure, kind, row["name"]), {})
                counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
            checked = self.checks.setdefault((figure, kind), [0, 0])
            checked[0] += any(row["verdict"] in SHIFTS for row in rows)
            checked[1] += 1
        for row in normalised:
            if isinstance(row.get("control_change_pct"), (int, float)):
                self.control.setdefault(f"{kind}: {row['name']}", []).append(float(row["control_change_pct"]))

    def false_checks(self, figure: str, kinds: tuple[str, ...]) -> tuple[int, int]:
        """(checks where some benchmark was called slower or faster, checks) of `kinds` on `figure`: the
        issue's unit, since a check fails when any of its benchmarks does."""
        picked = [c for (f, k), c in self.checks.items() if f == figure and k in kinds]
        return sum(c[0] for c in picked), sum(c[1] for c in picked)

    def alarms(self, figure: str, kind: str | None = None, kinds: tuple[str, ...] = KINDS) -> tuple[int, int]:
        picked = [c for (f, k, _), c in self.counts.items() if f == figure and kind in (None, k) and k in kinds]
        return sum(c.get(v, 0) for c in picked for v in SHIFTS), sum(sum(c.values()) for c in picked)


def planned_runs(args: argparse.Namespace) -> tuple[int, int]:
    """Runs this invocation takes, (fewest, most): the chain, the apart records and the injected records, ~1
    repeat per busy record; every check but the first record of each chain may take up to `max_runs` when
    undecided."""
    checks = args.pairs + args.apart_pairs + (len(args.inject) * args.trials)
    fewest = (checks + 1 + (1 if args.apart_pairs else 0)) * args.runs + (args.pairs // 2 if args.busy else 0)
    return fewest, fewest + checks * (args.max_runs - args.runs)


def minutes(args: argparse.Namespace, each_s: float) -> str:
    low, high = planned_runs(args)
    waits = args.apart_pairs * args.apart  # the apart records' waits
    low_min, high_min = (each_s * low + waits) / 60, (each_s * high + waits) / 60
    return f"{low_min:.0f}" if low == high else f"{low_min:.0f}-{high_min:.0f}"


def unchanged_chain(args: argparse.Namespace) -> tuple[list[Taken], Tally]:
    """The chain of unchanged records (busy every other one) and the tally of its pairs' verdicts."""
    records: list[Taken] = []
    tally = Tally()
    quiet: list[dict[str, Any]] = []  # the quiet records so far: the sessions a check's between-session spread is of
    for index in range(args.pairs + 1 if args.pairs else 0):
        busy = args.busy and index % 2 == 1
        history = list(quiet)
        records.append(record(args, busy=busy, reference=records[-1].baseline if records else None, history=history))
        if not busy:
            quiet.append(records[-1].baseline)
        loads = others(records[-1].check)
        print(f"record {index + 1}/{args.pairs + 1}{' (busy core)' if busy else ''}: other work "
              f"{', '.join(f'{x:.2f}' for x in loads)} CPUs", flush=True)
        if index == 0:
            if WALL_S:
                print(f"  a run takes ~{statistics.median(WALL_S):.1f} s here: this invocation needs about "
                      f"{minutes(args, statistics.median(WALL_S))} min", flush=True)
            continue
        kind = "busy check" if busy else "busy baseline" if args.busy else "quiet"
        raw, normalised = both(records[-2].baseline, records[-1].check)
        tally.add(kind, raw, normalised,
                  compare_records(records[-2].baseline, with_history(records[-1].baseline, history)))
        more = f", {len(records[-1].runs)} runs (undecided after {args.runs})" if records[-1].extended else ""
        print(f"pair {index} ({kind}{more}):", flush=True)
        for r, n in zip(raw, normalised, strict=True):
            print(f"  {n['name']}: raw {r['verdict']} | {n['verdict_text']}", flush=True)
    return records, tally


def apart_chain(args: argparse.Namespace, tally: Tally, planned: list[Injection]) -> list[Taken]:
    """`args.apart_pairs` + 1 quiet records, each started `args.apart` seconds after the previous one started;
    each check carries the between-session spread of the apart records before it. Their pairs go into `tally` as
    kind `apart`. With `--trials-in-waits`, the injected trials run in the last waits, one a wait where there are
    enough (never while an apart record is taken), against the apart records so far."""
    records: list[Taken] = []
    started = time.monotonic()
    for index in range(args.apart_pairs + 1):
        if index and not args.replay:
            # the trials go in the last waits, where the most apart records measure the spread they carry
            waiting = [i for i in planned if i.pending] if args.trials_in_waits else []
            to_take = sum(i.args.trials - i.trials for i in waiting) - (args.apart_pairs - index)
            for _ in range(max(to_take, 0)):
                injection = next(i for i in planned if i.pending)
                quiet = [r.baseline for r in records]
                injection.trial(quiet[injection.trials % len(quiet)], quiet)
            wait = started + args.apart - time.monotonic()
            print(f"  waiting {max(wait, 0.0):.0f} s: the next record starts at "
                  f"{time.strftime('%H:%M:%S', time.localtime(time.time() + max(wait, 0.0)))}", flush=True)
            time.sleep(max(wait, 0.0))
        started = time.monotonic()
        history = [r.baseline for r in records]
        records.append(record(args, reference=records[-1].baseline if records else None, history=history))
        print(f"apart record {index + 1}/{args.apart_pairs + 1} at {time.strftime('%H:%M:%S')}: other work "
              f"{', '.join(f'{x:.2f}' for x in others(records[-1].check))} CPUs", flush=True)
        if index == 0:
            continue
        raw, normalised = both(records[-2].baseline, records[-1].check)
        tally.add("apart", raw, normalised,
                  compare_records(records[-2].baseline, with_history(records[-1].baseline, history)))
        more = f", {len(records[-1].runs)} runs (undecided after {args.runs})" if records[-1].extended else ""
        print(f"apart pair {index} (started {args.apart:g} s apart{more}):", flush=True)
        for r, n in zip(raw, normalised, strict=True):
            print(f"  {n['name']}: raw {r['verdict']} | {n['verdict_text']}", flush=True)
        print(f"  done at {time.strftime('%H:%M:%S')}", flush=True)
    return records


def report_spreads(label: str, records: list[dict[str, Any]]) -> None:
    """The between-session spread per benchmark that `records` (one session each) measure."""
    measured = with_history({}, records)["between_sessions"]
    print(f"\nBETWEEN-SESSION SPREAD, {label} ({len(records)} quiet records):")
    for name, figures in sorted(measured.items()):
        shown = [f"{figure} ±{float(spread['spread_pct']):.1f}%" for figure, spread in sorted(figures.items())
                 if figure in ("raw", "normalised_all", "control_all")]
        sessions = figures.get("raw", {}).get("sessions", "?")
        print(f"  {name}: {', '.join(shown)} (over {sessions} sessions)")
    if not measured:
        print("  not measured (fewer than 3 records)")


BACK_TO_BACK = ("quiet", "busy check", "busy baseline")


def report_unchanged(args: argparse.Namespace, tally: Tally) -> None:
    print(f"\nUNCHANGED: {args.pairs} pairs of {args.runs}-run records back to back, a busy core during every other "
          "record" if args.busy else f"\nUNCHANGED: {args.pairs} pairs of {args.runs}-run records back to back, "
          "no busy core")
    if args.apart_pairs:
        print(f"  and {args.apart_pairs} pairs of quiet records {args.apart:g} s apart")
    for figure in ("raw", "normalised", FIRST):
        for label, kinds in (("back to back", BACK_TO_BACK), (f"{args.apart:g} s apart", ("apart",))):
            hits, total = tally.alarms(figure, kinds=kinds)
            if not total:
                continue
            by_kind = "; ".join(f"{kind} {rate(*tally.alarms(figure, kind))}" for kind in kinds
                                if tally.alarms(figure, kind)[1])
            print(f"  false slower/faster, {figure}, {label}: {rate(hits, total)} of benchmark verdicts - {by_kind}")
            print(f"    checks with a false slower/faster, {figure}, {label}: "
                  f"{rate(*tally.false_checks(figure, kinds))} (target <= 5%)")
    names = sorted({name for (_, _, name) in tally.counts})
    for name in names:
        for kind in KINDS:
            raw, norm = tally.counts.get(("raw", kind, name)), tally.counts.get(("normalised", kind, name))
            if raw or norm:
                moves = tally.control.get(f"{kind}: {name}") or []
                control = f"; control median {statistics.median(moves):+.1f}%" if moves else ""
                print(f"  {name} [{kind}]: raw {dict(sorted((raw or {}).items()))}; "
                      f"normalised {dict(sorted((norm or {}).items()))}{control}")


class Injection:
    """One injected change's trials and what they caught, raw, normalised and on the first look alone."""

    def __init__(self, args: argparse.Namespace, kind: str, env: dict[str, str], factor: float) -> None:
        self.args, self.kind, self.env, self.factor = args, kind, env, factor
        self.caught = {"raw": 0, "normalised": 0, FIRST: 0}
        self.slower: dict[tuple[str, str], int] = {}
        self.trials = 0

    @property
    def pending(self) -> bool:
        return self.trials < self.args.trials

    def trial(self, base: dict[str, Any], quiet: list[dict[str, Any]]) -> None:
        """One trial: a check record with the change, against `base`, carrying the spread `quiet` measures."""
        args, kind = self.args, self.kind
        after = record(args, self.env, self.factor, reference=base, history=quiet)
        raw, normalised = both(base, after.check)
        first = compare_records(base, with_history(after.baseline, quiet))
        for figure, rows in (("raw", raw), ("normalised", normalised), (FIRST, first)):
            watched = [r for r in rows if kind != "work" or r["name"].startswith(("gemm", "skinny"))]
            self.caught[figure] += any(r["verdict"] == "slower" for r in watched)
            for r in watched:
                self.slower[(figure, r["name"])] = self.slower.get((figure, r["name"]), 0) + (r["verdict"] == "slower")
        self.trials += 1
        more = f" ({len(after.runs)} runs, undecided after {args.runs})" if after.extended else ""
        print(f"{kind} trial {self.trials}{more}:", flush=True)
        for r, n in zip(raw, normalised, strict=True):
            print(f"  {n['name']}: raw {r['verdict']} | {n['verdict_text']}", flush=True)

    def report(self, records: list[dict[str, Any]]) -> None:
        label = f"work factor {self.factor:.3f}" if self.kind == "work" else "OMP_NUM_THREADS=1"
        print(f"\nINJECTED {label}, {self.trials} trials against quiet baselines:")
        for figure in ("raw", "normalised", FIRST):
            print(f"  caught (some benchmark slower), {figure}: {rate(self.caught[figure], self.trials)} "
                  "(target >= 95%)")
        for (figure, name), hits in sorted(self.slower.items()):
            entry = next((r["results"][name] for r in records if name in r["results"]), {"unit": name})
            direction = "higher" if higher_is_better(entry) else "lower"
            print(f"  {name} ({direction} is better) slower, {figure}: {rate(hits, self.trials)}")


def planned_injections(args: argparse.Namespace, taken: list[Taken]) -> list[Injection]:
    """The injections `--inject` names; `work` scales by the chain's median MDS (5 % without a chain)."""
    made = []
    for kind in args.inject:
        if kind == "threads":
            made.append(Injection(args, kind, {"OMP_NUM_THREADS": "1"}, 1.0))
            continue
        pairs = [both(a.baseline, b.check)[1] for a, b in zip(taken, taken[1:], strict=False)]
        mds = [float(r["mds_pct"]) / 100.0 for rows in pairs for r in rows
               if r["mds_pct"] is not None and r["name"].startswith(("gemm", "skinny"))]
        made.append(Injection(args, kind, {}, 1.0 + 2.0 * (statistics.median(mds) if mds else 0.05)))
    return made


def injections(args: argparse.Namespace, taken: list[Taken], apart: list[Taken],
               planned: list[Injection]) -> None:
    """The injected trials still to take, against the quiet records (the apart ones when taken), each check
    carrying the between-session spread those records measure; then every injection's figures."""
    quiet = [r.baseline for r in apart] if apart else \
        [r.baseline for i, r in enumerate(taken) if not (args.busy and i % 2 == 1)]
    for injection in planned:
        while injection.pending:
            injection.trial(quiet[injection.trials % len(quiet)], quiet)
    records = [r.baseline for r in taken + apart]
    for injection in planned:
        injection.report(records)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 pairs, 1 trial, 2 runs of 1.5 s")
    parser.add_argument("--pairs", type=int, default=40, help="unchanged pairs (issue target: >= 40)")
    parser.add_argument("--trials", type=int, default=20, help="trials per injection (target: >= 20)")
    parser.add_argument("--runs", type=int, default=3, help="runs per record (the baseline default, 3)")
    parser.add_argument("--max-runs", type=int, help="runs a check may take when undecided (check's default: "
                        "twice --runs; equal to --runs: never more, the figure before the extension)")
    parser.add_argument("--budget-s", type=float, default=2.0, help="suite budget of each run (default 2 s)")
    parser.add_argument("--only", action="append", help="only benchmarks whose name contains this (repeatable)")
    parser.add_argument("--inject", type=lambda s: [k for k in s.split(",") if k], default=["threads"],
                        help="comma-separated injections: threads, work (empty: none)")
    parser.add_argument("--no-busy", dest="busy", action="store_false", help="no busy core in the unchanged pairs")
    parser.add_argument("--apart", type=float, default=120.0, metavar="S",
                        help="seconds from the start of one apart record to the next (default 120; "
                        "issue 36's target: >= 120)")
    parser.add_argument("--trials-in-waits", action="store_true",
                        help="take the injected trials in the apart records' waits (never during an apart record)")
    parser.add_argument("--apart-pairs", type=int, default=0, metavar="P",
                        help="pairs of quiet records --apart seconds apart (default 0: none; target >= 40)")
    parser.add_argument("--save", type=Path, metavar="FILE",
                        help="write every record's runs and looks, in the order taken, as JSON (to judge them again)")
    parser.add_argument("--replay", type=Path, metavar="FILE",
                        help="judge the records a --save wrote (same arguments) instead of taking new ones")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.trials, args.runs = 2, 1, 2
    args.max_runs = default_max_runs(args.runs) if args.max_runs is None else args.max_runs
    unknown = [k for k in args.inject if k not in ("threads", "work")]
    if unknown or args.pairs < 0 or args.trials < 0 or args.runs < 1 or args.budget_s <= 0 or \
            args.max_runs < args.runs or args.apart < 0 or args.apart_pairs < 0 or args.pairs + args.apart_pairs < 1:
        print(f"sensitivity: bad arguments {unknown or ''}".rstrip(), file=sys.stderr)
        return 2
    if args.replay:
        REPLAY.extend(json.loads(args.replay.read_text("utf-8")))
    started = time.monotonic()
    records, tally = unchanged_chain(args)
    planned = planned_injections(args, records) if args.inject and args.trials else []
    apart = apart_chain(args, tally, planned) if args.apart_pairs else []
    report_unchanged(args, tally)
    quiet_chain = [r.baseline for i, r in enumerate(records) if not (args.busy and i % 2 == 1)]
    if quiet_chain:
        report_spreads("back to back", quiet_chain)
    if apart:
        report_spreads(f"{args.apart:g} s apart", [r.baseline for r in apart])
    if planned:
        injections(args, records, apart, planned)
    if EXTENDED:
        print(f"\nchecks: {sum(n > args.runs for n in EXTENDED)} of {len(EXTENDED)} took more runs (up to "
              f"{args.max_runs}); {statistics.fmean(EXTENDED):.2f} runs a check on average")
    if args.save:
        args.save.write_text(json.dumps(TAKEN, default=str), "utf-8")
        print(f"records written to {args.save}")
    control_share = [float(r.check["control"]["seconds"]) / float(r.check["elapsed_s"]) for r in records
                     if isinstance(r.check.get("control"), dict) and r.check.get("elapsed_s")]
    if control_share:
        print(f"\ncontrol: {100.0 * statistics.median(control_share):.1f}% of the suite's measured time (median)")
    if not WALL_S:
        return 0
    each = statistics.median(WALL_S)
    full = argparse.Namespace(pairs=40, trials=20, runs=3, max_runs=default_max_runs(3), inject=["threads"], busy=True,
                              apart_pairs=0, apart=120.0)
    apart_args = argparse.Namespace(**{**vars(full), "pairs": 0, "busy": False, "apart_pairs": 40})
    print(f"{time.monotonic() - started:.0f} s in all; a run took {each:.1f} s (median); the full run "
          f"(--pairs 40 --trials 20 --runs 3) would take about {minutes(full, each)} min "
          f"under this load, and the apart one (--pairs 0 --apart 120 --apart-pairs 40 --trials 20 --no-busy) about "
          f"{minutes(apart_args, each)} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
