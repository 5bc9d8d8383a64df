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
    """One line per result: median and unit, n, CV, the 95% CI of the median as ±%, efficiency."""
    header = [f"{key}: {data[key]}" for key in ("suite", "device", "device_name", "server", "model", "engine",
                                                 "threads", "torch_version") if data.get(key) is not None]
    lines = ["  ".join(header)] if header else []
    rows = [("benchmark", "median", "unit", "n", "cv", "ci95", "efficiency")]
    for name, result in sorted(data.get("results", {}).items()):
        median = float(result["median"])
        half = max(median - result["ci_low"], result["ci_high"] - median) / abs(median) * 100 if median else 0.0
        eff = result.get("efficiency")
        rows.append((name, _figure(median), str(result["unit"]), str(result["n"]), f"{result['cv']:.3f}",
                     f"±{half:.1f}%", f"{eff['ratio'] * 100:.0f}% of {eff['model']} {eff['reference']}" if eff else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    if data.get("skipped"):
        lines.append(f"not run (suite budget spent): {', '.join(data['skipped'])}")
    lines += [f"warning: {w}" for w in data.get("warnings") or []]
    if data.get("errors"):
        lines.append(f"failed requests: {len(data['errors'])}; first: {data['errors'][0]}")
    return "\n".join(lines) + "\n"
