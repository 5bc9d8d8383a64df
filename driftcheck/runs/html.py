"""`driftcheck runs --html FILE`: one self-contained page, each figure over time, one point per run.

Nothing is fetched: the data sits in the page as JSON and a short script of our own draws inline SVG
(one chart per figure, the x axis shared by all charts so a change lines up across them). Where the
snapshot before a run differs from the one before the previous run in a way `explain` ranks, a
dashed marker stands between the two points, and hovering it shows the top cause. A table of the
runs follows the charts, for reading without the script.
"""

from __future__ import annotations

import html
import json
import shlex
from dataclasses import dataclass
from typing import Any

from driftcheck.runs.store import RunRecord
from driftcheck.runs.summary import condition_text
from driftcheck.snapshot.printable import printable, script_json


@dataclass(frozen=True)
class ChangePoint:
    """Between the run before and `run_id`, the snapshot changed; `cause` is the top-ranked explanation."""

    run_id: int
    previous_id: int
    cause: str
    causes: int


def page_data(runs: list[RunRecord], changes: list[ChangePoint]) -> dict[str, Any]:
    """The JSON the page's script draws from."""
    metrics: dict[str, dict[str, Any]] = {}
    for run in runs:
        for metric in run.metrics:
            entry = metrics.setdefault(metric.name, {"label": metric.label, "unit": metric.unit,
                                                     "higher_is_better": metric.higher_is_better})
            entry.setdefault("points", []).append({"run": run.id, "value": metric.value})
    return {
        "runs": [{"id": run.id, "started_at": run.started_at, "label": printable(run.label) if run.label else None,
                  "command": printable(shlex.join(run.command)), "exit_code": run.exit_code,
                  "snapshot_id": (run.snapshot_id or "")[:12],
                  "conditions": [condition_text(c) for c in run.conditions]} for run in runs],
        "metrics": metrics,
        "changes": [{"run": c.run_id, "previous": c.previous_id, "cause": c.cause, "causes": c.causes}
                    for c in changes],
    }


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:15px;margin:20px 0 4px}
.sub{color:#666;margin:0 0 16px} svg{display:block;overflow:visible}
.axis{stroke:#999;stroke-width:1} .grid{stroke:#eee;stroke-width:1} .tick{fill:#666;font-size:11px}
.line{fill:none;stroke:#3b6fb6;stroke-width:1.5} .point{fill:#3b6fb6;stroke:#fff;stroke-width:1.5}
.point.failed{fill:#c0392b} .point.disturbed{stroke:#d35400;stroke-width:2.5}
.change{stroke:#d35400;stroke-width:1.5;stroke-dasharray:4 3}
.change-hit{stroke:transparent;stroke-width:12;cursor:help}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:6px 8px;border-radius:4px;
font-size:12px;max-width:420px;display:none;white-space:pre-wrap}
table{border-collapse:collapse;margin-top:24px} td,th{border-bottom:1px solid #eee;padding:3px 8px;text-align:left}
"""

_SCRIPT = r"""
(function () {
  var data = JSON.parse(document.getElementById('runs-data').textContent);
  var NS = 'http://www.w3.org/2000/svg', W = 720, H = 220, L = 64, R = 16, T = 12, B = 28;
  var order = {}; data.runs.forEach(function (r, i) { order[r.id] = i; });
  var byId = {}; data.runs.forEach(function (r) { byId[r.id] = r; });
  var tip = document.getElementById('tip');
  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function show(text, ev) { tip.textContent = text; tip.style.display = 'block';
    tip.style.left = (ev.clientX + 12) + 'px'; tip.style.top = (ev.clientY + 12) + 'px'; }
  function hide() { tip.style.display = 'none'; }
  function hover(node, text) {
    el('title', {}, node).textContent = text;
    node.addEventListener('mousemove', function (ev) { show(text, ev); });
    node.addEventListener('mouseleave', hide);
  }
  function fmt(v) { return Math.abs(v) >= 1000 ? v.toFixed(0) : Number(v.toPrecision(4)).toString(); }
  var n = Math.max(data.runs.length, 1);
  function x(runId) { return L + (n === 1 ? (W - L - R) / 2 : order[runId] * (W - L - R) / (n - 1)); }
  var host = document.getElementById('charts');
  // Rates (throughput, bandwidth) first: they are what runs are compared on.
  function rank(name) { return data.metrics[name].higher_is_better === true ? 0 : 1; }
  Object.keys(data.metrics).sort(function (a, b) { return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0); })
      .forEach(function (name) {
    var m = data.metrics[name], pts = m.points;
    var section = document.createElement('section'); section.className = 'metric'; section.id = 'metric-' + name;
    var h = document.createElement('h2');
    h.textContent = m.label + (m.unit ? ' (' + m.unit + ')' : '') +
      (m.higher_is_better === true ? ', higher is better' : m.higher_is_better === false ? ', lower is better' : '');
    section.appendChild(h);
    var svg = el('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'class': 'chart'}, section);
    var vals = pts.map(function (p) { return p.value; });
    var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
    if (lo === hi) { lo -= Math.abs(lo) * 0.1 || 1; hi += Math.abs(hi) * 0.1 || 1; }
    var pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
    function y(v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); }
    for (var g = 0; g <= 4; g++) {
      var gv = lo + (hi - lo) * g / 4;
      el('line', {x1: L, x2: W - R, y1: y(gv), y2: y(gv), 'class': 'grid'}, svg);
      el('text', {x: L - 6, y: y(gv) + 4, 'text-anchor': 'end', 'class': 'tick'}, svg).textContent = fmt(gv);
    }
    el('line', {x1: L, x2: W - R, y1: H - B, y2: H - B, 'class': 'axis'}, svg);
    data.runs.forEach(function (r) {
      el('text', {x: x(r.id), y: H - B + 16, 'text-anchor': 'middle', 'class': 'tick'}, svg).textContent = r.id;
    });
    data.changes.forEach(function (c) {
      var cx = (x(c.previous) + x(c.run)) / 2;
      var text = 'snapshot changed before run ' + c.run + ' (' + c.causes + ' ranked cause' +
        (c.causes === 1 ? '' : 's') + ')\ntop cause: ' + c.cause;
      el('line', {x1: cx, x2: cx, y1: T, y2: H - B, 'class': 'change', 'data-run': c.run}, svg);
      el('text', {x: cx + 4, y: T + 10, 'class': 'tick change-label'}, svg).textContent = 'snapshot changed';
      hover(el('line', {x1: cx, x2: cx, y1: T, y2: H - B, 'class': 'change-hit', 'data-run': c.run}, svg), text);
    });
    el('polyline', {points: pts.map(function (p) { return x(p.run) + ',' + y(p.value); }).join(' '),
                    'class': 'line'}, svg);
    pts.forEach(function (p) {
      var r = byId[p.run];
      var circle = el('circle', {cx: x(p.run), cy: y(p.value), r: 4.5, 'data-run': p.run,
                                 'class': 'point' + (r.exit_code ? ' failed' : '') +
                                          (r.conditions.length ? ' disturbed' : '')}, svg);
      hover(circle, 'run ' + r.id + ' \u00b7 ' + fmt(p.value) + (m.unit ? ' ' + m.unit : '') + '\n' +
        r.started_at + '\n' + (r.label || r.command) + (r.exit_code ? '\nexit code ' + r.exit_code : '') +
        '\nsnapshot ' + r.snapshot_id + r.conditions.map(function (c) { return '\n! ' + c; }).join(''));
    });
    host.appendChild(section);
  });
  if (!Object.keys(data.metrics).length) host.textContent = 'No run printed a figure driftcheck recognised.';
})();
"""


def _table(runs: list[RunRecord]) -> str:
    rows = []
    for run in runs:
        figures = ", ".join(f"{m.name} {m.value:g}{' ' + m.unit if m.unit else ''}" for m in run.metrics)
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in (
            run.id, run.started_at, run.exit_code, (run.snapshot_id or "")[:12],
            printable(run.label or shlex.join(run.command)),
            figures)) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("run", "started", "exit", "snapshot", "command", "figures"))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def runs_html(runs: list[RunRecord], changes: list[ChangePoint], title: str = "driftcheck runs") -> str:
    """The whole page: styles, data and script inline; it loads nothing from anywhere."""
    data = script_json(json.dumps(page_data(runs, changes), sort_keys=True))
    span = f"{runs[0].started_at} to {runs[-1].started_at}" if runs else "no runs"
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            f"script-src 'unsafe-inline'; style-src 'unsafe-inline'\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p class=\"sub\">{len(runs)} runs, {html.escape(span)}; "
            f"{len(changes)} snapshot change(s) marked; hover a point or a dashed marker.</p>"
            f"<div id=\"charts\"></div><div id=\"tip\"></div>{_table(runs)}"
            f"<script type=\"application/json\" id=\"runs-data\">{data}</script>"
            f"<script>{_SCRIPT}</script></body></html>\n")
