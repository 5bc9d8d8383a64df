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


def _spread(result: dict[str, Any]) -> tuple[str, str]:
    """CV and the 95% CI of the median as ±%; dashes for a single value, which has no spread."""
    median = float(result["median"])
    if int(result.get("n") or 0) < 2 or result.get("cv") is None or result.get("ci_low") is None:
        return "-", "-"
    half = max(median - result["ci_low"], result["ci_high"] - median) / abs(median) * 100 if median else 0.0
    return f"{result['cv']:.3f}", f"±{half:.1f}%"


def _serving_lines(data: dict[str, Any]) -> list[str]:
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


def results_text(data: dict[str, Any]) -> str:
    """One line per result: median and unit, n, CV, the 95% CI of the median as ±%, efficiency."""
    header = [f"{key}: {data[key]}" for key in ("suite", "device", "device_name", "server", "model", "engine",
                                                 "threads", "torch_version") if data.get(key) is not None
              and not (key == "engine" and data.get("dialect"))]
    lines = ["  ".join(header)] if header else []
    lines += _serving_lines(data)
    rows = [("benchmark", "median", "unit", "n", "cv", "ci95", "efficiency")]
    for name, result in sorted(data.get("results", {}).items()):
        cv, ci = _spread(result)
        eff = result.get("efficiency")
        rows.append((name, _figure(result["median"]), str(result["unit"]), str(result["n"]), cv, ci,
                     f"{eff['ratio'] * 100:.0f}% of {eff['model']} {eff['reference']}" if eff else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    if data.get("skipped"):
        lines.append(f"not run (suite budget spent): {', '.join(data['skipped'])}")
    lines += [f"warning: {w}" for w in data.get("warnings") or []]
    if data.get("errors"):
        lines.append(f"failed requests: {len(data['errors'])}; first: {data['errors'][0]}")
    return "\n".join(lines) + "\n"
