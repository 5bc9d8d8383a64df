"""Verdicts on a benchmark between two records: slower, faster, unchanged or inconclusive, with the
minimum detectable shift (MDS) those two records allow.

A run's own samples only say how steady the machine was *during* that run. Between two runs (a
reboot, another process start, a VM neighbour, a GPU whose clocks wander) the speed moves by more,
and a test built on one run's samples calls that movement a change. So each record keeps the
median of every independent run (`driftcheck bench --runs N`), and the comparison works on those:

- the shift is the ratio of the geometric means of the run medians (a difference of mean logs);
- its noise is the between-run spread, pooled over both sides' runs (a t-test on log medians,
  two-sided, 1%: `driftcheck.stats.comparison`, where the paired tests of `try` live too), never less
  than what one run's own CI says;
- with a single run on both sides the spread is unknown: a conservative default spread is assumed
  (`DEFAULT_SPREAD`, measured; see README) and the verdict says so;
- the two records were taken in two sessions, and a host's speed also moves between sessions (other
  tenants, frequency, memory placement), which no record's own runs show: the shift's variance is
  2 sb^2 + sw^2 (1/nA + 1/nB), sb this host's between-session spread of that figure, measured from the
  records of an unchanged state (`driftcheck.analysis.sessions`, `driftcheck.stats.sessions`) and carried in
  the check's record, else a stated default (`DEFAULT_BETWEEN_SESSIONS`) that the verdict names;
- MDS = the t critical value times the standard error of the shift: a shift at least that large
  would be called `slower`/`faster`; no verdict is called for a shift under `MIN_EFFECT`;
- `unchanged`: the shift is no larger than one run or one session typically differs from another (the
  larger spread, at least `MIN_EFFECT`) and the MDS is at most `RESOLVED_MDS`; `inconclusive`: anything else
  that is not called (a shift between the spread and the MDS, records too noisy to resolve 25%, or not
  comparable), with what would resolve it.

A run flagged as disturbed (other processes, CPU steal, other GPU work, throttling) cannot carry a
verdict in the direction its disturbance pushes: the verdict becomes `inconclusive` and names the
disturbance. `inconclusive` never fails a gate and
is never evidence for or against a cause.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, TypeGuard

from driftcheck.analysis.sessions import RAW, BetweenSessions, between_of, control_figure_name
from driftcheck.baselines.control import MIN_CONTROL_SHIFT, ControlFigure, control_figures
from driftcheck.stats.comparison import (
    ALPHA_CHECK,
    MIN_EFFECT,
    Resolution,
    control_moved,
    mds_with_runs,
    normalised_log,
)
from driftcheck.stats.looks import Looks
from driftcheck.stats.run_medians import RESOLVED_MDS, UNRESOLVABLE_MDS, RunFigure, logs, resolution
from driftcheck.stats.sessions import SessionSpread, across_sessions

# A shift either way: what a verdict calls, and what fails the gate (the gate of `driftcheck check`).
SHIFTS = ("slower", "faster")


class ControlVerdict(TypedDict, total=False):
    """What both sides' controls said of one verdict: whether recorded, its kind and change, whether the machine
    moved beyond the control's own noise, and which figure decided (`raw` or `normalised`)."""

    recorded: bool
    kind: str
    change_pct: float
    mds_pct: float
    moved: bool
    machine: str | None
    decided_by: str
    note: str | None


class LooksTaken(TypedDict):
    """The looks of a check that took more runs where its first ones could not decide."""

    runs: list[int]
    planned: int
    alpha_each: float
    decided_at: int | None


class BetweenRow(TypedDict):
    """The between-session spread a verdict counted: ±%, measured here (over how many sessions) or assumed."""

    spread_pct: float
    measured: bool
    sessions: int
    df: int


class VerdictRow(TypedDict, total=False):
    """One benchmark's verdict between two records (see `compare_results` for the keys)."""

    name: str
    unit: str
    before: float | None
    after: float | None
    ratio: float | None
    change_pct: float | None
    verdict: str
    direction: str
    significant: bool
    mds_pct: float | None
    spread_pct: float | None
    spread_measured: bool
    between_sessions: BetweenRow
    runs: list[int]
    disturbance: str | None
    reason: str | None
    held_by: str | None
    raw_change_pct: float | None
    normalised_change_pct: float | None
    control_change_pct: float | None
    control: ControlVerdict | None
    looks: LooksTaken
    verdict_text: str
    t: float  # a fleet's prediction test (driftcheck.analysis.fleet_bench): its statistic and two-sided p
    p: float


def run_figures(entry: Mapping[str, object]) -> list[RunFigure]:
    """The per-run medians of a stored result (`runs`), or its one median for a single-run record."""
    runs = entry.get("runs")
    if isinstance(runs, list) and runs:
        out = []
        for run in runs:
            median = run.get("median") if isinstance(run, Mapping) else None
            if _positive(median):
                disturbed = run.get("disturbed")
                out.append(RunFigure(float(median), _fraction(run.get("ci_rel")) or 0.0,
                                     disturbed if isinstance(disturbed, str) and disturbed else None,
                                     _fraction(run.get("taken"))))
        return out
    median = entry.get("median")
    if not _positive(median):
        return []
    return [RunFigure(float(median), _relative_ci(entry))]


def _positive(value: object) -> TypeGuard[float]:
    """Whether `value` is a usable figure: a finite positive number (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and math.isfinite(value)


def _fraction(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _relative_ci(entry: Mapping[str, object]) -> float:
    values = [entry.get(key) for key in ("median", "ci_low", "ci_high")]
    if not all(isinstance(v, (int, float)) for v in values) or not values[0]:
        return 0.0
    median, low, high = (float(v) for v in values)  # type: ignore[arg-type]
    return max(median - low, high - median) / abs(median)


def higher_is_better(entry: Mapping[str, object]) -> bool:
    """Whether a larger figure is faster: the stored flag, else guessed from the unit (x/s is a rate)."""
    if "higher_is_better" in entry:
        return bool(entry["higher_is_better"])
    unit = str(entry.get("unit", ""))
    return "/s" in unit or unit.endswith("_per_s")


def looks_of(entry: Mapping[str, object], taken: int, family: int = 1) -> Looks:
    """The looks a record planned at this benchmark (`looks`: run counts, driftcheck.stats.looks),
    reached within its `taken` usable runs; one look at all of them for a record that planned none. `family`:
    the comparisons asked at once that share the level (Looks.family)."""
    stored = entry.get("looks")
    if not isinstance(stored, list) or not stored or \
            not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in stored):
        return Looks((taken,), 1, family)
    return Looks(tuple(sorted({min(n, taken) for n in stored} | {taken})), len(stored), family)


def _deciding_look(figures_before: Sequence[RunFigure], figures_after: Sequence[RunFigure], looks: Looks,
                   device: str, between: SessionSpread) -> int | None:
    """The number of B's runs whose shift lies beyond its MDS at the looks' level: all of them when they do,
    else the first earlier look that did (that benchmark was decided there; later runs were taken for others);
    None when no look did."""
    mean_before = statistics.fmean(logs(figures_before))

    def crosses(n: int) -> bool:
        shown = figures_after[:n]
        shift = statistics.fmean(logs(shown)) - mean_before
        mds_log = _resolution(figures_before, shown, device, between, looks.alpha_each).mds_log
        return abs(shift) >= mds_log and abs(math.expm1(shift)) >= MIN_EFFECT

    last = looks.reached[-1]
    if crosses(last):
        return last
    return next((n for n in looks.reached[:-1] if crosses(n)), None)


def disturbance_explains(shift: float, figures: Sequence[RunFigure]) -> str | None:
    """The disturbance of `figures` that could account for a loss of `shift` (a fraction), if any."""
    disturbed = [f for f in figures if f.disturbed]
    if not disturbed:
        return None
    # Any disturbance can explain any shift: a busy core stalls a whole OpenMP team at each barrier, so
    # others taking half of a 2-core machine made a 2-thread decode 8x slower than one thread (measured).
    worst = max(disturbed, key=lambda f: math.inf if f.taken is None else f.taken)
    return f"{len(disturbed)} of {len(figures)} runs; worst: {worst.disturbed}"


def _resolution(before: Sequence[RunFigure], after: Sequence[RunFigure], device: str, between: SessionSpread,
                alpha: float = ALPHA_CHECK) -> Resolution:
    """How finely two records taken in two sessions can tell a shift: their runs' pooled test, widened by the
    between-session spread (driftcheck.stats.sessions)."""
    return across_sessions(resolution(before, after, device, alpha), between, len(before), len(after), alpha)


def _between_row(between: SessionSpread) -> BetweenRow:
    return {"spread_pct": round(between.spread_pct, 2), "measured": between.measured, "sessions": between.sessions,
            "df": between.df}


def verdict(name: str, before: Mapping[str, object] | None, after: Mapping[str, object] | None,
            device: str = "cpu", between: BetweenSessions | None = None, family: int = 1) -> VerdictRow:
    """The verdict entry of one benchmark between two stored results (see `compare_results`); `between`: this
    host's between-session spreads of the benchmark (default: none measured, the device's default assumed)."""
    entry = _verdict(name, before, after, device, between or BetweenSessions({}, device), family)
    entry["verdict_text"] = verdict_text(entry)
    return entry


def _judge(figures_before: Sequence[RunFigure], figures_after: Sequence[RunFigure], higher: bool,
           device: str, between: SessionSpread, looks: Looks | None = None) -> VerdictRow:
    """The verdict fields of one comparison of run figures (raw or control-normalised), `between` the
    between-session spread of that figure. `looks`: where a record that took more runs when undecided looked
    at B's runs (default: once, at all of them)."""
    looks = looks or Looks((len(figures_after),), 1)
    alpha = looks.alpha_each
    deciding = _deciding_look(figures_before, figures_after, looks, device, between)
    called = deciding is not None
    # A benchmark decided at an earlier look is reported as it was decided: on that look's runs.
    figures_after = figures_after[:deciding] if deciding else figures_after
    mean_before, mean_after = statistics.fmean(logs(figures_before)), statistics.fmean(logs(figures_after))
    shift_log = mean_after - mean_before
    ratio = math.exp(shift_log)
    res = _resolution(figures_before, figures_after, device, between, alpha)
    # One estimator for every printed figure: before and after are the geometric means of the run
    # medians, so `after / before` is the ratio and the percentage, never a figure of another estimator.
    out: VerdictRow = {"before": math.exp(mean_before), "after": math.exp(mean_after), "ratio": ratio,
                           "change_pct": round((ratio - 1.0) * 100.0, 2), "mds_pct": round(res.mds * 100.0, 2),
                           "spread_pct": round((math.exp(res.spread) - 1.0) * 100.0, 2),
                           "spread_measured": res.measured, "between_sessions": _between_row(between),
                           "significant": False, "disturbance": None, "reason": None,
                           "held_by": None, "runs": [len(figures_before), len(figures_after)]}
    if looks.planned > 1:
        out["looks"] = {"runs": list(looks.reached), "planned": looks.planned, "alpha_each": alpha,
                        "decided_at": deciding}
    better = (ratio > 1.0) == higher
    # The side whose disturbance pushes the way the shift went (B's for a loss, A's for a gain), and what of it.
    explained = disturbance_explains(abs(1.0 - min(ratio, 1.0 / ratio)),
                                      figures_before if better else figures_after)
    if called:
        if explained:
            out.update({"verdict": "inconclusive", "direction": "inconclusive", "disturbance": explained,
                        "held_by": "load",
                        "reason": f"{'A' if better else 'B'} was disturbed ({explained}): that could explain it"})
            return out
        direction = "faster" if better else "slower"
        out.update({"verdict": direction, "direction": direction, "significant": True})
    elif abs(shift_log) <= max(res.spread, between.spread, math.log1p(MIN_EFFECT)) and res.mds <= RESOLVED_MDS:
        out.update({"verdict": "unchanged", "direction": "unchanged"})
    else:
        out.update({"verdict": "inconclusive", "direction": "inconclusive",
                    "reason": _inconclusive_reason(res, device, between, (len(figures_before), len(figures_after)))})
        if explained:
            # Even a shift more runs carried past the MDS would be held by that load: nothing more to learn.
            out["held_by"] = "load"
    summary = disturbance_summary(figures_before, figures_after)
    if summary and out["disturbance"] is None:
        out["disturbance"] = summary
    if not res.measured and out["reason"] is None:
        out["reason"] = (f"one run per side: between-run spread unknown, assumed ±{out['spread_pct']:.0f}% "
                         f"(default for {device})")
    return out


def _verdict(name: str, before: Mapping[str, object] | None, after: Mapping[str, object] | None,
             device: str, between: BetweenSessions, family: int = 1) -> VerdictRow:
    unit = str((after or before or {}).get("unit", ""))
    entry: VerdictRow = {"name": name, "unit": unit, "before": _fraction((before or {}).get("median")),
                             "after": _fraction((after or {}).get("median")), "ratio": None, "change_pct": None,
                             "verdict": "inconclusive", "direction": "missing", "significant": False,
                             "mds_pct": None, "spread_pct": None, "spread_measured": False, "runs": [0, 0],
                             "disturbance": None, "reason": None, "held_by": None, "raw_change_pct": None,
                             "normalised_change_pct": None, "control_change_pct": None, "control": None}
    if before is None or after is None:
        entry["reason"] = f"measured only {'after' if before is None else 'before'}"
        return entry
    figures_before, figures_after = run_figures(before), run_figures(after)
    entry["runs"] = [len(figures_before), len(figures_after)]
    if not figures_before or not figures_after:
        entry["reason"] = "no usable median on one side"
        return entry
    higher = higher_is_better(after)
    looks = looks_of(after, len(figures_after), family)
    raw = _judge(figures_before, figures_after, higher, device, between.of(RAW), looks)
    entry.update({**raw, "raw_change_pct": raw["change_pct"]})
    sides = _controlled_sides(before, after, device)
    if isinstance(sides, str):
        entry["control"] = {"recorded": False, "note": sides}
        return entry
    entry.update(_controlled(raw, sides, (figures_before, figures_after), higher, device, between, looks))
    return entry


@dataclass(frozen=True)
class _Sides:
    """Both sides' per-run controls of one benchmark, and the thread count each side ran it on."""

    before: list[ControlFigure]
    after: list[ControlFigure]
    single: bool  # one thread in short batches on both sides: the single-thread control applies


def _controlled_sides(before: Mapping[str, object], after: Mapping[str, object], device: str) -> _Sides | str:
    """Both sides' controls, or why the verdict stays on raw figures."""
    runs = [_run_entries(before), _run_entries(after)]
    read = [control_figures(side) for side in runs]
    if read[0] is None or read[1] is None:
        missing = " and ".join(tag for tag, c in zip("AB", read, strict=True) if c is None)
        return f"no control was recorded in {missing} (taken before the control existed): verdict on raw figures"
    controls = (read[0], read[1])
    if device != "cpu":
        return "a CPU control does not track a GPU's speed: verdict on raw figures"
    stated = [entry.get("threads") for side in runs for entry in side]
    threads = [t for t in stated if isinstance(t, int) and not isinstance(t, bool) and t > 0]
    # A run that did not say how many threads it used counts as multi-threaded: the cautious reading.
    one_thread = len(threads) == len(stated) and max(threads) == 1
    short = all(c.short for side in controls for c in side)
    return _Sides(controls[0], controls[1], one_thread and short)


def _run_entries(entry: Mapping[str, object]) -> list[Mapping[str, object]]:
    """The per-run entries of a stored result that carry a usable median (a single-run result is its own)."""
    runs = entry.get("runs")
    if isinstance(runs, list) and runs:
        return [run for run in runs if isinstance(run, Mapping) and _positive(run.get("median"))]
    return [entry] if _positive(entry.get("median")) else []


def _normalised(figures: Sequence[RunFigure], controls: Sequence[ControlFigure], single: bool,
                higher: bool) -> list[RunFigure]:
    """Each run's figure divided by its control (a time multiplied: a slower machine takes longer)."""
    return [RunFigure(math.exp(normalised_log(f.median, c.for_kind(single), higher)), f.ci_rel, f.disturbed, f.taken)
            for f, c in zip(figures, controls, strict=True)]


def _controlled(raw: VerdictRow, sides: _Sides, figures: tuple[Sequence[RunFigure], Sequence[RunFigure]],
                higher: bool, device: str, between: BetweenSessions, looks: Looks | None = None) -> VerdictRow:
    """The verdict fields with both sides' controls: made on the control-normalised figures where the control
    moved beyond its own noise, between sessions included (a control vouches only for a shift larger than it
    moves on its own), else on the raw ones (see driftcheck.baselines.control)."""
    figures_before, figures_after = figures
    single = sides.single
    control_before = [RunFigure(c.for_kind(single)) for c in sides.before]
    control_after = [RunFigure(c.for_kind(single)) for c in sides.after]
    control_shift = statistics.fmean(logs(control_after)) - statistics.fmean(logs(control_before))
    control_res = _resolution(control_before, control_after, device,
                              between.of(control_figure_name(single, normalised=False)))
    moved = control_moved(control_shift, control_res, MIN_CONTROL_SHIFT)
    slow_side = figures_after if control_shift < 0 else figures_before
    loaded = [f for f in slow_side if f.disturbed]
    kind = "single-thread" if single else f"all-cores ({sides.before[0].threads or '?'} threads)"
    control_pct = round((math.exp(control_shift) - 1.0) * 100.0, 2)
    machine = None
    if moved:
        machine = (f"the whole machine is slower now: control {control_pct:+.0f}%" if control_shift < 0
                   else f"the whole machine was slower in A: control {control_pct:+.0f}% now")
        if loaded:
            worst = max(loaded, key=lambda f: math.inf if f.taken is None else f.taken)
            machine += f", {'B' if control_shift < 0 else 'A'}: {worst.disturbed}"
    normalised = _judge(_normalised(figures_before, sides.before, single, higher),
                        _normalised(figures_after, sides.after, single, higher), higher, device,
                        between.of(control_figure_name(single, normalised=True)), looks)
    # A control that did not move beyond its own noise says nothing about the machine: dividing by it would
    # only add that noise (the all-cores figure is one ~25 ms batch; on the 2-core VM it wandered +-20% between
    # runs while a 2-thread GEMM that lost 45% to OMP_NUM_THREADS=1 was called slower on 8 of 10 raw figures
    # and 3 of 10 normalised ones). So the user's own figure decides, and the normalised one is shown beside it.
    out = (normalised if moved else raw).copy()
    control: ControlVerdict = {"recorded": True, "kind": kind, "change_pct": control_pct,
                               "mds_pct": round(control_res.mds * 100.0, 2), "moved": moved, "machine": machine,
                               "decided_by": "normalised" if moved else "raw", "note": None}
    # The printed before/after stay the user's own figures; ratio and change are those of the deciding figure.
    out.update({"before": raw["before"], "after": raw["after"], "normalised_change_pct": normalised["change_pct"],
                "control_change_pct": control_pct, "control": control})
    if moved and loaded:
        # Under other load no benchmark loses what the control loses: a thread team waits for its busy core,
        # a copy loses less, a short op's median dodges preemptions the control's batches meet. No figure can
        # decide, unless both moved against the machine (faster on a slower machine), which no load explains.
        against = "faster" if control_shift < 0 else "slower"
        if not (raw["verdict"] == against and normalised["verdict"] == against):
            out.update({"verdict": "inconclusive", "direction": "inconclusive", "significant": False,
                        "held_by": "load",
                        "reason": (f"{machine}; under other load a benchmark loses more or less than the control, "
                                   "so neither its raw nor its normalised figure can decide")})
    elif moved:
        control["note"] = ("no other work was seen on the slower side: a clock or steal change, which "
                                  "every thread feels alike, so the normalised figure decides")
    if out["verdict"] in SHIFTS and raw["verdict"] != out["verdict"]:
        # The control can excuse a shift, never make or turn one: dividing by it adds the control's own noise,
        # and on a quiet 2-core machine that alone once called an unchanged benchmark 21 % faster (raw -12 %,
        # inside its MDS; control -10 %). A shift is called only where the user's own figure shows it too.
        out.update({"verdict": "inconclusive", "direction": "inconclusive", "significant": False,
                    "reason": (f"only the control-normalised figure shifts ({normalised['change_pct']:+.1f}%; raw "
                               f"{raw['change_pct']:+.1f}%, {raw['verdict']}; control {control_pct:+.0f}%): the "
                               "control can explain a shift away, never make one")})
    return out


# What measures a host's between-session spread: a baseline taken in several sessions minutes apart.
MEASURE_SESSIONS = "driftcheck baseline save NAME --bench SUITE --sessions 5 --interval 120"


def _inconclusive_reason(res: Resolution, device: str, between: SessionSpread, runs: tuple[int, int]) -> str:
    if 2.0 * between.spread ** 2 > res.spread ** 2 * (1.0 / runs[0] + 1.0 / runs[1]):
        return _sessions_reason(res, between)
    if res.measured and res.mds > UNRESOLVABLE_MDS:
        # No projection: at this spread more runs would not bring the MDS to anything useful either.
        return f"this machine cannot resolve it now (run-to-run spread ±{_percent(math.exp(res.spread) - 1.0)})"
    if not res.measured:
        return (f"one run per side: between-run spread unknown, assumed ±{(math.exp(res.spread) - 1) * 100:.0f}% "
                f"(default for {device}); take both records with --runs 3 or more")
    hint = f"; with --runs 5 on both sides MDS would be ±{mds_with_runs(res.spread, 5) * 100.0:.0f}%"
    if res.mds > RESOLVED_MDS:
        return f"these records cannot resolve shifts under ±{_percent(res.mds)}{hint}"
    return f"inside this machine's run-to-run spread{hint}"


def _sessions_reason(res: Resolution, between: SessionSpread) -> str:
    """Why records of two sessions cannot decide, where most of their noise is the host's between sessions."""
    if not between.measured:
        return (f"{between_text(between)}: records of two sessions cannot resolve shifts under "
                f"±{_percent(res.mds)}; measure it on this host (`{MEASURE_SESSIONS}`)")
    return (f"{between_text(between)}: this host's speed moves that much between sessions, so a check against "
            f"the past cannot resolve shifts under ±{_percent(res.mds)} here; compare both states in one session "
            "(`driftcheck try`)")


def between_text(between: SessionSpread | Mapping[str, object]) -> str:
    """`between-session spread ±7.1% over 5 sessions`, or `... assumed ±22%, not yet measured here`."""
    if isinstance(between, SessionSpread):
        pct, measured, sessions = between.spread_pct, between.measured, between.sessions
    else:
        stored = between.get("sessions")
        pct, measured = _fraction(between.get("spread_pct")) or 0.0, bool(between.get("measured"))
        sessions = stored if isinstance(stored, int) else 0
    if measured:
        return f"between-session spread ±{pct:.1f}% over {sessions} sessions"
    return f"between-session spread assumed ±{pct:.0f}%, not yet measured here"


def _percent(fraction: float) -> str:
    return f"{fraction * 100.0:.1f}%" if fraction < 10.0 else ">1000%"


def disturbance_summary(before: Sequence[RunFigure], after: Sequence[RunFigure]) -> str | None:
    """`A 1/3, B 2/3 runs disturbed (worst: ...)`, or None when no run was."""
    counts = [(side, sum(1 for f in figures if f.disturbed), len(figures))
              for side, figures in (("A", before), ("B", after))]
    flagged = [f for f in (*before, *after) if f.disturbed]
    if not flagged:
        return None
    worst = max(flagged, key=lambda f: math.inf if f.taken is None else f.taken)
    sides = ", ".join(f"{side} {n}/{total}" for side, n, total in counts if n)
    return f"{sides} runs disturbed (worst: {worst.disturbed})"


def compare_verdicts(before: Mapping[str, Mapping[str, object]], after: Mapping[str, Mapping[str, object]],
                     device: str = "cpu", between: Mapping[str, BetweenSessions] | None = None,
                     family: int = 1) -> list[VerdictRow]:
    """One verdict entry per benchmark name of two `results` maps, sorted by name; `between`: the host's
    between-session spreads by benchmark name (a benchmark without one: the device's default, assumed)."""
    between = between or {}
    return [verdict(name, before.get(name), after.get(name), device, between.get(name), family)
            for name in sorted(set(before) | set(after))]


def verdict_text(entry: Mapping[str, object]) -> str:
    """The verdict for people: `-4.1% (MDS ±9.0%, spread ±3.2% over 3+3 runs): inconclusive - why`; with a
    control, `-2.0% normalised (raw -40.0%, control -38.0% single-thread) (MDS ...): unchanged - ...`."""
    change = entry.get("change_pct")
    mds = entry.get("mds_pct")
    stored_runs = entry.get("runs")
    runs = stored_runs if isinstance(stored_runs, list) and len(stored_runs) == 2 else [0, 0]
    stored = entry.get("control")
    control: Mapping[str, object] = stored if isinstance(stored, Mapping) else {}
    text = f"{change:+.1f}%" if isinstance(change, (int, float)) else "n/a"
    if control.get("recorded") and control.get("decided_by") == "raw" and isinstance(
            entry.get("normalised_change_pct"), (int, float)):
        text += (f" (normalised {entry['normalised_change_pct']:+.1f}%, control {control.get('change_pct'):+.1f}% "
                 f"{control.get('kind')}, within its noise)")
    elif control.get("recorded") and isinstance(entry.get("raw_change_pct"), (int, float)):
        text += (f" normalised (raw {entry['raw_change_pct']:+.1f}%, control {control.get('change_pct'):+.1f}% "
                 f"{control.get('kind')})")
    machine = control.get("machine")
    # The machine's move is said once: an inconclusive verdict may already give it as its reason.
    notes = [str(n) for n in (machine if machine and str(machine) not in str(entry.get("reason") or "") else None,
                              control.get("note")) if n]
    between = entry.get("between_sessions")
    if isinstance(between, Mapping) and between_text(between) not in str(entry.get("reason") or ""):
        # Every verdict against the past says which between-session spread it counted, measured or assumed.
        notes.append(between_text(between))
    tail = "".join(f"; {n}" for n in notes)
    if (isinstance(mds, (int, float)) and mds > UNRESOLVABLE_MDS * 100.0 and entry.get("spread_measured")
            and entry.get("verdict") == "inconclusive"):
        return f"{text}: inconclusive - {entry.get('reason')}{tail}"
    if isinstance(mds, (int, float)):
        spread = _fraction(entry.get("spread_pct")) or 0.0
        source = f"over {runs[0]}+{runs[1]} runs" if entry.get("spread_measured") else "assumed: one run per side"
        looks = entry.get("looks")
        if isinstance(looks, Mapping) and looks.get("planned"):
            # A check that took more runs when its first ones could not decide looked more than once.
            source += f", {looks['planned']} looks at {100.0 * (_fraction(looks.get('alpha_each')) or 0.0):.2g}% each"
            reached, decided = looks.get("runs"), looks.get("decided_at")
            if decided and isinstance(reached, list) and reached and decided != reached[-1]:
                source += f", decided at {decided} of {reached[-1]} runs"
        text += f" (MDS ±{_percent(mds / 100.0)}, spread ±{_percent(spread / 100.0)} {source})"
    text += f": {entry.get('verdict')}"
    if entry.get("reason"):
        text += f" - {entry['reason']}"
    elif entry.get("disturbance"):
        text += f" - disturbed: {entry['disturbance']}"
    return text + tail


def verdict_line(entry: Mapping[str, object]) -> str:
    """`name: ` and the verdict text."""
    return f"{entry.get('name')}: {verdict_text(entry)}"


def compare_results(before: Mapping[str, Mapping[str, object]], after: Mapping[str, Mapping[str, object]],
                    device: str = "cpu", between: Mapping[str, BetweenSessions] | None = None,
                    family: int = 1) -> list[VerdictRow]:
    """Compare two `probes.bench.data.results` maps, one entry per benchmark name (sorted).

    Each entry: name, unit, before/after (medians), ratio (after/before, of the geometric means of
    the run medians), change_pct, verdict, direction (= verdict; `missing` when a side lacks the
    benchmark), significant, mds_pct, spread_pct, spread_measured, between_sessions (the between-session
    spread counted), runs [A, B], disturbance, reason.
    """
    return compare_verdicts(before, after, device, between, family)


def compare_records(before: Mapping[str, object], after: Mapping[str, object], family: int = 1) -> list[VerdictRow]:
    """Compare two whole `bench` probe data records (their `results`, on the device B ran on), with the
    between-session spreads B carries (a check measured them when it took B), else A's, else none. `family`:
    how many such comparisons are asked at once, each at its share of the level (a fleet's hosts)."""
    device = str(after.get("device") or before.get("device") or "cpu")
    between = between_of(after, device) or between_of(before, device)
    return compare_results(_results(before), _results(after), device, between, family)


def _results(record: Mapping[str, object]) -> Mapping[str, Mapping[str, object]]:
    """A record's results by benchmark name (none when it holds no map of them)."""
    results = record.get("results")
    return results if isinstance(results, Mapping) else {}
