"""Between-session spreads of a record: what a check measured of this host from the sessions kept in the store
(`driftcheck.store.sessions`), carried in the check's benchmark record (`between_sessions`), and read back by
every verdict against the past (`driftcheck.analysis.bench_verdicts`), so a verdict is a function of its two
records even when it is judged again later.

Each benchmark has up to five spreads, one per figure a verdict may use: `raw` (the user's own figure), and for
each kind of control (`single`-thread or `all`-cores, driftcheck.baselines.control) the control's own figure
(`control_single`, `control_all`: whether the control can vouch) and the normalised figure (`normalised_single`,
`normalised_all`). A figure this host has not measured (fewer than MIN_SESSIONS sessions) is not in the record:
the verdict assumes the stated default (`default_between`) and says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from driftcheck.baselines.control import control_figures
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.stats.comparison import normalised_log
from driftcheck.stats.run_medians import DEFAULT_BETWEEN_SESSIONS
from driftcheck.stats.sessions import SessionSpread, assumed_spread, measured_spread, spread_from_json
from driftcheck.store.sessions import BenchSession

RAW = "raw"
# The figures a verdict may use, each with its own between-session spread.
FIGURES = (RAW, "control_single", "control_all", "normalised_single", "normalised_all")


def default_between(device: str) -> SessionSpread:
    """The between-session spread assumed on `device` where this host has measured none."""
    return assumed_spread(DEFAULT_BETWEEN_SESSIONS.get(device, DEFAULT_BETWEEN_SESSIONS["cpu"]))


@dataclass(frozen=True)
class BetweenSessions:
    """One benchmark's between-session spreads by figure (only those measured here)."""

    measured: Mapping[str, SessionSpread]
    device: str = "cpu"

    def of(self, figure: str) -> SessionSpread:
        """The spread of `figure`: measured here, else the device's default (assumed)."""
        return self.measured.get(figure) or default_between(self.device)


def control_figure_name(single: bool, normalised: bool) -> str:
    """The figure name of a control's kind: `control_single`, `normalised_all`, ..."""
    return f"{'normalised' if normalised else 'control'}_{'single' if single else 'all'}"


def _session_logs(entry: Mapping[str, object]) -> dict[str, list[float]]:
    """Every figure's log run medians in one session's entry ({higher_is_better, runs})."""
    runs = entry.get("runs")
    usable = [run for run in runs if isinstance(run, dict) and _positive(run.get("median"))] \
        if isinstance(runs, list) else []
    if not usable:
        return {}
    medians = [float(run["median"]) for run in usable]
    logs = {RAW: [math.log(m) for m in medians]}
    controls = control_figures(usable)
    if controls is not None:
        higher = entry.get("higher_is_better") is not False
        for single in (True, False):
            figures = [c.for_kind(single) for c in controls]
            logs[control_figure_name(single, False)] = [math.log(f) for f in figures]
            logs[control_figure_name(single, True)] = [normalised_log(m, f, higher)
                                                       for m, f in zip(medians, figures, strict=True)]
    return logs


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and math.isfinite(value)


def between_sessions(sessions: Sequence[BenchSession]) -> dict[str, JSONObject]:
    """What a record carries as `between_sessions`: per benchmark, the spread of each figure measured over
    `sessions` (grouped by state); a benchmark or figure with too few sessions is left out."""
    grouped: dict[str, dict[str, dict[str, list[list[float]]]]] = {}
    for session in sessions:
        for figure, logs in _session_logs(session.entry).items():
            grouped.setdefault(session.name, {}).setdefault(figure, {}).setdefault(session.state, []).append(logs)
    out: dict[str, JSONObject] = {}
    for name, figures in sorted(grouped.items()):
        measured = {figure: measured_spread(list(states.values())) for figure, states in figures.items()}
        kept: JSONObject = {figure: spread.to_json() for figure, spread in measured.items() if spread is not None}
        if kept:
            out[name] = kept
    return out


def between_of(record: Mapping[str, object], device: str) -> dict[str, BetweenSessions]:
    """The between-session spreads a benchmark record carries, by benchmark name (none: all assumed)."""
    stored = record.get("between_sessions")
    if not isinstance(stored, Mapping):
        return {}
    out = {}
    for name, figures in stored.items():
        if not isinstance(figures, Mapping):
            continue
        read = {figure: spread_from_json(value) for figure, value in figures.items() if figure in FIGURES}
        out[str(name)] = BetweenSessions({k: v for k, v in read.items() if v is not None}, device)
    return out
