"""Runs as text: the `driftcheck runs` list, one run in detail, and the run part of `explain run:A run:B`."""

from __future__ import annotations

import shlex
from typing import Any

from driftcheck.runs.compare import RunComparison
from driftcheck.runs.metrics import Metric
from driftcheck.runs.store import RunRecord
from driftcheck.runs.summary import condition_text
from driftcheck.snapshot.printable import printable

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


def _spread(name: str, values: dict[str, Any] | None, unit: str) -> str | None:
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
    cpu = telemetry.get("cpu") or {}
    cpu_parts = [_spread("freq", cpu.get("freq_mhz"), "MHz"), _spread("steal", cpu.get("steal_pct"), "%"),
                 _spread("load", cpu.get("load1"), "")]
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
