"""Plain-text tables of benchmark results, for `driftcheck bench`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _figure(value: Any) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value == 0 or abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.4g}"


def _spread(result: dict[str, Any]) -> tuple[str, str]:
    """CV and the 95% CI of the median as ±%; dashes for a single value, which has no spread."""
    median = float(result["median"])
    if int(result.get("n") or 0) < 2 or result.get("cv") is None or result.get("ci_low") is None:
        return "-", "-"
    half = max(median - result["ci_low"], result["ci_high"] - median) / abs(median) * 100 if median else 0.0
    return f"{result['cv']:.3f}", f"±{half:.1f}%"


def _serving_lines(data: Mapping[str, Any]) -> list[str]:
    """The engine, how requests were phrased, and the length each request got, for a --server run."""
    lines = []
    if data.get("engine"):
        version = f" {data['engine_version']}" if data.get("engine_version") else ""
        lines.append(f"engine: {data['engine']}{version}")
    dialect = data.get("dialect") or {}
    if dialect.get("description"):
        lines.append(f"requests: {dialect['description']}")
    lines += [f"  negotiated: {note}" for note in dialect.get("notes") or []]
    for level, facts in sorted((data.get("levels") or {}).items()):
        requests = [r for r in facts.get("requests") or [] if not r.get("error")]
        if requests:
            reasons = sorted({str(r.get("finish_reason")) for r in requests})
            lengths = sorted({int(r["output_tokens"]) for r in requests})
            shown = ", ".join(map(str, lengths[:6])) + (", ..." if len(lengths) > 6 else "")
            tokens, chunks = sum(int(r["output_tokens"]) for r in requests), sum(int(r["chunks"]) for r in requests)
            lines.append(f"{level}: {len(requests)} requests, output tokens {shown}, finish_reason "
                         f"{', '.join(reasons)}; {tokens} tokens in {chunks} chunks")
    return lines


def results_text(data: Mapping[str, Any]) -> str:
    """One line per result: median and unit, n, CV, the 95% CI of the median as ±%, the spread between runs
    (with several runs), efficiency; then which runs were disturbed or repeated."""
    header = [f"{key}: {data[key]}" for key in ("suite", "device", "device_name", "server", "model", "engine",
                                                 "threads", "torch_version") if data.get(key) is not None
              and not (key == "engine" and data.get("dialect"))]
    lines = ["  ".join(header)] if header else []
    lines += _serving_lines(data)
    multi = any(len(r.get("runs") or []) > 1 for r in data.get("results", {}).values())
    rows: list[tuple[str, ...]] = [("benchmark", "median", "unit", "n", "cv", "ci95", "between-run", "efficiency")]
    for name, result in sorted(data.get("results", {}).items()):
        cv, ci = _spread(result)
        eff = result.get("efficiency")
        spread = (result.get("between_runs") or {}).get("spread_pct")
        between = f"±{spread:.1f}% ({len(result['runs'])} runs)" if isinstance(spread, (int, float)) else "-"
        rows.append((name, _figure(result["median"]), str(result["unit"]), str(result["n"]), cv, ci, between,
                     f"{eff['ratio'] * 100:.0f}% of {eff['model']} {eff['reference']}" if eff else ""))
    if not multi:
        rows = [row[:6] + row[7:] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    if data.get("skipped"):
        lines.append(f"not run (suite budget spent): {', '.join(data['skipped'])}")
    control = data.get("control")
    if isinstance(control, dict) and isinstance(control.get("seconds"), (int, float)) and data.get("elapsed_s"):
        # What the control of checks against the past cost (driftcheck.baselines.control): its share of the suite.
        lines.append(f"control (machine speed, measured around every benchmark): {control['seconds']:.1f} s of "
                     f"{float(data['elapsed_s']):.1f} s")
    lines += [f"warning: {w}" for w in data.get("warnings") or []]
    for index, report in enumerate(data.get("run_reports") or [], 1):
        disturbance = (report or {}).get("disturbance") or {}
        repeat = (report or {}).get("repeat")
        if disturbance.get("disturbed"):
            lines.append(f"run {index} disturbed: {disturbance['disturbed']}")
        if repeat:
            lines.append(f"run {index} was repeated (first try disturbed: {repeat['first_disturbance']}); "
                         f"kept the {repeat['kept']}")
    if data.get("errors"):
        lines.append(f"failed requests: {len(data['errors'])}; first: {data['errors'][0]}")
    return "\n".join(lines) + "\n"


def between_sessions_text(between: Mapping[str, Mapping[str, Any]], sessions: int) -> str:
    """The between-session spread of each benchmark's own figure a baseline taken in `sessions` sessions
    measured (with the host's earlier sessions), or which it could not measure yet."""
    lines = [f"between sessions ({sessions} taken; pooled with this host's earlier sessions of the suite):"]
    for name, figures in sorted(between.items()):
        raw = figures.get("raw")
        if isinstance(raw, Mapping):
            lines.append(f"  {name}: ±{float(raw.get('spread_pct') or 0.0):.1f}% over {raw.get('sessions')} sessions")
    if len(lines) == 1:
        lines.append("  not measured yet (fewer than 3 sessions of one state)")
    return "".join(line + "\n" for line in lines)
