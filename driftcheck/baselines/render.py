"""Plain-text tables of benchmark results, for `driftcheck bench`."""

from __future__ import annotations

from typing import Any


def _figure(value: Any) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value == 0 or abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.4g}"


def results_text(data: dict[str, Any]) -> str:
    """One line per result: median and unit, n, CV, the 95% CI of the median as ±%, the spread between runs
    (with several runs), efficiency; then which runs were disturbed or repeated."""
    header = [f"{key}: {data[key]}" for key in ("suite", "device", "device_name", "server", "model", "engine",
                                                 "threads", "torch_version") if data.get(key) is not None]
    lines = ["  ".join(header)] if header else []
    multi = any(len(r.get("runs") or []) > 1 for r in data.get("results", {}).values())
    rows: list[tuple[str, ...]] = [("benchmark", "median", "unit", "n", "cv", "ci95", "between-run", "efficiency")]
    for name, result in sorted(data.get("results", {}).items()):
        median = float(result["median"])
        half = max(median - result["ci_low"], result["ci_high"] - median) / abs(median) * 100 if median else 0.0
        eff = result.get("efficiency")
        spread = (result.get("between_runs") or {}).get("spread_pct")
        between = f"±{spread:.1f}% ({len(result['runs'])} runs)" if isinstance(spread, (int, float)) else "-"
        rows.append((name, _figure(median), str(result["unit"]), str(result["n"]), f"{result['cv']:.3f}",
                     f"±{half:.1f}%", between,
                     f"{eff['ratio'] * 100:.0f}% of {eff['model']} {eff['reference']}" if eff else ""))
    if not multi:
        rows = [row[:6] + row[7:] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    if data.get("skipped"):
        lines.append(f"not run (suite budget spent): {', '.join(data['skipped'])}")
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
