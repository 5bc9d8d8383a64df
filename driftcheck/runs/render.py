"""Runs and trials as text: the `driftcheck runs` list, one run in detail, the line `run` ends with, the run part
of `explain run:A run:B`, a trial's comparisons and rounds (`try`) and a bisection's outcome (`bisect`)."""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING

from driftcheck.runs.metrics import Metric
from driftcheck.runs.shapes import Spread
from driftcheck.runs.store import RunRecord
from driftcheck.runs.summary import condition_text
from driftcheck.snapshot.printable import printable

if TYPE_CHECKING:
    # Named in annotations only: `run`'s closing line imports no comparison (nor its speculative arithmetic).
    from driftcheck.runs.bisect import Bisection, Step
    from driftcheck.runs.compare import RunComparison
    from driftcheck.runs.session import RunOutcome
    from driftcheck.runs.trial import TrialResult

_INLINE_METRICS = 3


def _value(metric: Metric) -> str:
    unit = f" {metric.unit}" if metric.unit else ""
    return f"{metric.name} {metric.value:.4g}{unit}"


def headline(metrics: list[Metric]) -> list[Metric]:
    """The figures worth a glance: rates first (throughput is what a run is compared on), in printed order."""
    rates = [m for m in metrics if m.higher_is_better]
    return rates + [m for m in metrics if not m.higher_is_better]


def command_text(run: RunRecord, width: int = 48) -> str:
    """The run's label, else its command line, cut to `width`; control characters shown, never obeyed."""
    text = printable(run.label or shlex.join(run.command))
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _ended(run: RunRecord) -> str:
    return f"{run.exit_code} ({run.signal})" if run.signal else str(run.exit_code)


def runs_text(runs: list[RunRecord]) -> str:
    """The `driftcheck runs` table, oldest first, with each run's headline figures and GPU conditions."""
    if not runs:
        return "no runs recorded yet; record one with `driftcheck run -- CMD ARGS`\n"
    lines = [f"{'RUN':>5}  {'STARTED':<20}  {'EXIT':<4}  {'SECONDS':>8}  {'SNAPSHOT':<12}  COMMAND"]
    for run in runs:
        lines.append(f"{run.id:>5}  {run.started_at:<20}  {_ended(run):<4}  {run.duration_s:>8.1f}  "
                     f"{(run.snapshot_id or '-')[:12]:<12}  {command_text(run)}")
        shown = headline(run.metrics)
        if shown:
            more = f"  (+{len(shown) - _INLINE_METRICS} more)" if len(shown) > _INLINE_METRICS else ""
            lines.append(" " * 7 + ", ".join(_value(m) for m in shown[:_INLINE_METRICS]) + more)
        lines.extend(" " * 7 + "! " + condition_text(c) for c in run.conditions)
    return "\n".join(lines) + "\n"


def _spread(name: str, values: Spread | None, unit: str) -> str | None:
    if not values:
        return None
    return f"{name} {values['min']:g} / {values['median']:g} / {values['max']:g} {unit}"


def run_detail_text(run: RunRecord) -> str:
    """One run in full: command, outcome, snapshots, every figure, the telemetry summary."""
    lines = [f"run {run.id}" + (f"  '{printable(run.label)}'" if run.label else ""),
             f"  command:   {printable(shlex.join(run.command))}",
             f"  cwd:       {printable(run.cwd)}",
             f"  host:      {printable(run.host)}",
             f"  started:   {run.started_at}, {run.duration_s:.1f} s",
             f"  exit code: {_ended(run)}",
             f"  snapshots: {run.snapshot_id or '-'} before, {run.after_snapshot_id or '-'} after"]
    lines.append("  metrics:" if run.metrics else "  metrics:   none found in the output")
    for metric in run.metrics:
        unit = f" {metric.unit}" if metric.unit else ""
        seen = f"  (seen {metric.count}x, last kept)" if metric.count > 1 else ""
        lines.append(f"    {metric.name} = {metric.value:g}{unit}{seen}  [{metric.source}]")
    telemetry = run.telemetry
    source = telemetry.get("gpu_source")
    lines.append(f"  GPUs:      sampled through {source} every {telemetry.get('interval_s', 1):g} s" if source
                 else f"  GPUs:      not sampled: {telemetry.get('gpu_note') or 'no source'}")
    for key, gpu in (telemetry.get("gpus") or {}).items():
        name = f"GPU {gpu['index']}" if gpu.get("index") is not None else key
        lines.append(f"    {name} {gpu.get('name') or ''} ({gpu.get('samples', 0)} samples)".rstrip())
        parts = [_spread("SM", gpu.get("sm_mhz"), "MHz"), _spread("mem", gpu.get("mem_mhz"), "MHz"),
                 _spread("power", gpu.get("power_w"), "W"), _spread("temp", gpu.get("temp_c"), "C"),
                 _spread("util", gpu.get("util_pct"), "%")]
        lines.extend(f"      {p} (min/median/max)" for p in parts if p)
        for reason, seconds in (gpu.get("reason_s") or {}).items():
            lines.append(f"      {reason}: {seconds:g} s")
    cpu = telemetry.get("cpu")
    cpu_parts = [_spread("freq", cpu.get("freq_mhz"), "MHz"), _spread("steal", cpu.get("steal_pct"), "%"),
                 _spread("load", cpu.get("load1"), "")] if cpu else []
    lines.append("  CPU:       " + ("; ".join(p.strip() for p in cpu_parts if p) or "not sampled"))
    lines.extend("  ! " + condition_text(c, f"run {run.id}") for c in run.conditions)
    return "\n".join(lines) + "\n"


def comparison_head_text(comparison: RunComparison, limit: int = 8) -> str:
    """The lines `explain run:A run:B` prints first: the figures that moved, then what the telemetry saw."""
    a, b = comparison.a, comparison.b
    lines = [f"run {a.id} -> run {b.id}: {command_text(b, 70)}"]
    if not comparison.changes:
        lines.append("  no figure printed by both runs")
    for change in comparison.changes[:limit]:
        lines.append(f"  {change.text()}")
    if len(comparison.changes) > limit:
        lines.append(f"  ... and {len(comparison.changes) - limit} more figures (--format json has them all)")
    if comparison.speculative is not None:
        lines.extend(f"  {line}" for line in comparison.speculative.lines())
    for run in (a, b):
        if run.exit_code != 0:
            lines.append(f"  note: run {run.id} exited {_ended(run)}; its figures may be partial")
    return "\n".join(lines) + "\n"


def run_summary_text(outcome: RunOutcome) -> str:
    """The line `driftcheck run` ends with: the record stored, how the command ended, its figures, the
    snapshots around it, and the conditions the GPUs and CPUs were in."""
    record = outcome.record
    ended = f"exit {record.exit_code}" + (f" ({record.signal})" if record.signal else "")
    figures = headline(record.metrics)
    shown = ", ".join(f"{m.label} {m.value:g}{' ' + m.unit if m.unit else ''}" for m in figures[:3])
    more = f" (+{len(figures) - 3} more)" if len(figures) > 3 else ""
    what = f"{len(figures)} figure(s): {shown}{more}" if figures else "no figure found in the output"
    after = outcome.after.short_id if outcome.after else "none"
    lines = [f"driftcheck: run {record.id} stored ({ended}, {record.duration_s:.1f} s); {what}; "
             f"snapshots {outcome.before.short_id if outcome.before else 'none'} before, {after} after"]
    lines.extend(f"driftcheck: ! {condition_text(c, f'run {record.id}')}" for c in record.conditions)
    return "\n".join(lines) + "\n"

def trial_text(result: TrialResult) -> str:
    """`driftcheck try`'s report: each comparison, the figure and how the trial stopped, the variants, the rounds."""
    unit = f" {result.unit}" if result.unit else ""
    lines = [describe_comparison(result, name) for name in result.comparisons]
    lines.append(f"figure: {result.metric}{unit}; {len(result.runs)} runs in {result.elapsed_s:.1f} s, stopped: "
                 f"{result.stopped}; seed {result.seed} (--seed {result.seed} repeats the order)")
    lines.extend(f"  {v.name}: {v.describe()}" for v in result.plan.variants)
    lines.append("rounds:")
    lines.extend(pair_lines(result))
    return "\n".join(lines) + "\n"


def describe_comparison(result: TrialResult, name: str) -> str:
    """`B vs A: -36.1 % (95 % CI -38.0..-34.2 %, 6 pairs, p=0.016): B is slower`, or the resolution reached."""
    c = result.comparisons[name]
    reference = result.plan.variants[0].name
    level = f"{(1 - result.looks.alpha) * 100:g} %"
    head = (f"{name} vs {reference}: {c.effect_pct:+.1f} % ({level} CI {c.ci_low_pct:+.1f}..{c.ci_high_pct:+.1f} %, "
            f"{c.n} pairs, p={c.p_value:.2g})")
    if c.decided:
        return f"{head}: {name} is {result.verdict(name)}"
    seen = ("nothing could have been seen with so few pairs" if math.isinf(c.detectable_pct)
            else f"±{c.detectable_pct:.0f} % would have been seen" if c.detectable_pct >= 1
            else f"±{c.detectable_pct:.1f} % would have been seen")
    return f"{head}: no difference resolved: {seen}"


def pair_lines(result: TrialResult) -> list[str]:
    """One line per round: each variant's figure, in the order they ran."""
    lines = []
    unit = f" {result.unit}" if result.unit else ""
    for round_no in sorted({r.round for r in result.runs}):
        runs = [r for r in result.runs if r.round == round_no]
        lines.append(f"  {round_no:>3}  " + "  ".join(f"{r.variant} {r.value:.6g}{unit}" for r in runs))
    return lines


def bisection_lines(bisection: Bisection) -> list[str]:
    """The outcome in words: what alone reproduces how much of the shift, and what the rest did."""
    full = bisection.full
    if not bisection.finished:
        return _unfinished(bisection)
    assert full is not None  # a finished bisection ran its first trial
    if not bisection.culprits:
        return [f"all {len(bisection.changes)} changes together: {full.effect_pct:+.1f} % in {full.pairs} pairs, "
                f"p={full.p_value:.2g}: no difference resolved, nothing to bisect"]
    named = ", ".join(c.describe() for c in bisection.culprits)
    share = bisection.share_pct()
    how_much = f"{share:.0f} % of the shift" if share is not None else "the shift"
    alone = "alone reproduces" if len(bisection.culprits) == 1 else "together reproduce"
    rest = bisection.rest
    others = ""
    if rest is not None:
        what = "a difference" if rest.decided else "no difference resolved"
        others = (f"; the other {len(rest.changes)} change(s) together: {what} ({rest.effect_pct:+.1f} %, "
                  f"{rest.pairs} pairs, p={rest.p_value:.2g}){' (reused)' if rest.reused else ''}")
    lines = [f"B vs A with all {len(bisection.changes)} changes: {full.effect_pct:+.1f} % ({full.pairs} pairs, "
             f"p={full.p_value:.2g}): B is {bisection.verdict_word}{' (reused)' if full.reused else ''}",
             f"{named} {alone} {how_much}{others}"]
    reused = f" ({bisection.reused} reused from the records of an earlier run)" if bisection.reused else ""
    lines.append(f"{len(bisection.steps) + 1 + (rest is not None)} trials{reused}; the ddmin steps:")
    lines.extend(_step_line(s) for s in bisection.steps)
    return lines


def _step_line(step: Step) -> str:
    return (f"  {', '.join(c.describe() for c in step.changes)}: {step.effect_pct:+.1f} % ({step.pairs} pairs, "
            f"p={step.p_value:.2g}) {'reproduces' if step.reproduces else 'does not'}"
            + (" (reused)" if step.reused else ""))


def _unfinished(bisection: Bisection) -> list[str]:
    full = bisection.full
    done = len(bisection.steps) + (full is not None)
    lines = [f"bisection {bisection.bisection_id} stopped by its budget after {done} finished trial(s)"
             + (f", {bisection.reused} of them reused" if bisection.reused else "")
             + "; run the same command with --resume to go on from them (the trial cut off is run again)"]
    if full is not None:
        lines.append(f"B vs A with all {len(bisection.changes)} changes: {full.effect_pct:+.1f} % ({full.pairs} "
                     f"pairs, p={full.p_value:.2g})" + (" (reused)" if full.reused else ""))
    lines.extend(_step_line(s) for s in bisection.steps)
    return lines
