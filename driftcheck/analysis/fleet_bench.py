"""Slow nodes by measurement: every host of a fleet ran the calibrated suite, and each is asked whether it lies
outside the fleet: outside the prediction interval that the other hosts give for one more machine of theirs.

Per benchmark a host's figure is the median of the logs of its run medians (of two runs, their mean). For host H
the k other hosts' figures give their centre and their spread s (`driftcheck.stats.prediction`): s^2 estimates
the whole variance of one host's figure, the machines' own differences and each figure's run noise together, on
k - 1 degrees of freedom. H's shift from the centre, d, is judged by t = d / (s sqrt(1 + 1/k)) with k - 1
degrees of freedom: the textbook test of "is this a member of that population". Its MDS is
t_crit * s sqrt(1 + 1/k). A host is named `slower` or `faster` only where a benchmark's shift lies beyond that
MDS and is at least MIN_EFFECT, `inconclusive` where it cannot tell (with why, in the fleet's words:
`fleet_reason`), `unchanged` where the shift is within one host's typical distance from the centre (the
standard error s sqrt(1 + 1/k), or MIN_EFFECT) and the MDS is at most RESOLVED_MDS.

Why not a check's own test (one record against another, widened by the between-session spread): across a
fleet the reference is not a past session of the same machine but a sample of other machines. The check's
variance 2 sb^2 + sw^2 (1/nA + 1/nB) splits the spread into sb and sw by an ANOVA, whose sb^2 is cut to 0
whenever the machines happen to agree better than the runs; the test then took the runs' many degrees of
freedom and named an unchanged host on a 4% launch-overhead shift (issue 34). s^2 here needs no split, so
nothing is truncated, and its degrees of freedom are the hosts', never the runs'.

Every host is asked about at once, so each is judged at its share of the check's level (ALPHA_CHECK / N for N
hosts, Bonferroni): under the model an unchanged fleet names some host about as often as one check names an
unchanged machine. Leaving H out of its own reference keeps a slow host from widening the spread it is judged
by; a slow host among the others widens theirs, which makes them less likely to be named, never more.

A median, not a mean: a run that stalled, not always flagged as disturbed, moves a mean of n runs by 1/n of its
stall (in logs) and a median of three not at all. On an unchanged host such a run widens the others' spread s,
and so the MDS a slow host is judged by: of twelve real-sshd tries with two runs a host, two quiet ones left the
one-thread host inconclusive that way (README). The median of n runs keeps more of the run noise than their mean
(`median_variance`: 0.449 sw^2 for three, a mean's 1/3), which s^2 measures as it is. Resampled from 168 real runs
(benchmarks/fleet_bench_sensitivity.py, 1000 fleets of eight; 34 runs quiet, the rest under other load), the two
cannot be told apart: under load neither names any host (a one-thread host is not slow there); from the quiet
runs the mean of two runs named the one-thread host in 40 fleets and the median of three in 37, and an
unchanged fleet named some host in 33 and 21; with every flag taken out, 69 and 66. (A mean of three, judged so
offline, gave 66, 19 and 48: on so few quiet runs, no better; the median is kept for the stall it ignores.)

The others' spread s is never taken below what the runs' own noise leaves in a host's figure (`runs_floor`:
sqrt(median_variance(n)) sw, sw the log runs' spread pooled within the hosts): s^2 estimates sb^2 +
median_variance(n) sw^2, which is never under its runs' part, but on k - 1 degrees of freedom a few hosts can
agree by chance. Alone on the 2-core VM, six unchanged hosts' GEMM medians fell within ±4% while their runs
spread ±17%, and a seventh unchanged host whose three runs all fell low was named 38% slower against an MDS of
±25%. The floor only widens the MDS (the degrees of freedom stay the hosts'), so the level only falls: resampled,
it took the quiet runs' wrong namings from 9 in 300 fleets to 0, at the cost of the one-thread host's 8 namings.

A host is named only where each of its runs, not only their median, lies beyond the MDS on the same side
(otherwise `inconclusive`, `held_by: runs`): one stall moves a median of two runs by half, two stalls out of
three move a median of three. Without this rule the resampled unchanged fleets above, flags taken out, named
some host in 184 of 1000 (median of three; 66 from the quiet runs, against 21 with it). A run flagged as
disturbed (other work, CPU steal) cannot carry a verdict in the direction its disturbance pushes, as in a
check: H's disturbed runs hold a loss, the others' disturbed runs hold a gain, and the verdict is `inconclusive`
with the disturbance (`held_by: load`).

The figures compared are the user's own (raw), never the control-normalised ones: a check's control excuses
a shift the whole machine shows (a clock, a neighbour) because a check asks what changed on one machine; across
a fleet, a machine that is slower at everything is the very node being looked for (a CPU quota, a throttled
clock), and the controls of different machines differ by just that.

With fewer than MIN_HOSTS hosts measured nothing is judged: two hosts that differ say nothing of which one
is slow.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftcheck.analysis.bench_verdicts import (
    SHIFTS,
    VerdictRow,
    disturbance_explains,
    disturbance_summary,
    higher_is_better,
    run_figures,
)
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.stats.comparison import ALPHA_CHECK, MIN_EFFECT, MIN_SPREAD
from driftcheck.stats.prediction import MIN_OTHERS, median_variance, predict_member, runs_floor
from driftcheck.stats.run_medians import RESOLVED_MDS, RunFigure, logs

# The fewest hosts that measured before any is judged: each host then has at least two others to be
# compared with, so a difference has a majority to stand against.
MIN_HOSTS = 3
# A host's verdict, from its benchmarks': a shift either way names it; `unchanged` hosts are not named.
VERDICTS = ("slower", "faster", "inconclusive", "unchanged")
# The widest MDS a row carries (in logs: a millionfold); wider ones are cut to it.
_MAX_MDS_LOG = math.log(1e6)
# A side of a check's disturbance summary (`A 2/3, B 1/3 runs disturbed`): the fleet and this host here.
_SIDE = re.compile(r"\b([AB]) (\d+/\d+)")


@dataclass(frozen=True)
class HostBench:
    """One host's measurement and its verdict against the rest of the fleet.

    `figures`: the host's figure (its runs' median) per benchmark; `rows`: the verdict rows of
    `compare_records` (fleet = before, this host = after), empty when the fleet was not judged; `verdict`:
    one of VERDICTS, or None when not judged."""

    host: str
    suite: str
    device: str
    runs: int
    figures: dict[str, float]
    units: dict[str, str]
    rows: list[VerdictRow] = field(default_factory=list)
    verdict: str | None = None

    @property
    def named(self) -> bool:
        """Whether the statistics decided this host is slower or faster than the fleet."""
        return self.verdict in SHIFTS

    def benchmarks(self, *verdicts: str) -> list[VerdictRow]:
        """The verdict rows with one of `verdicts` (all compared rows when none is given)."""
        compared = [row for row in self.rows if row.get("direction") != "missing"]
        return [row for row in compared if not verdicts or row.get("verdict") in verdicts]

    def to_json(self) -> JSONObject:
        """The host's `bench` object in `driftcheck fleet --bench --format json`."""
        return {"suite": self.suite, "device": self.device, "runs": self.runs, "verdict": self.verdict,
                "figures": {name: {"value": value, "unit": self.units.get(name, "")}
                            for name, value in sorted(self.figures.items())},
                "benchmarks": [_row_json(row) for row in self.rows]}


@dataclass
class FleetBench:
    """The fleet's measurement: each host that measured (by name), the hosts whose bench failed (with why),
    those measured on another device than the fleet's (not comparable), whether the fleet was judged, and the
    records judged (each host's `bench` probe data; not in the JSON, whose figures and rows say what they hold)."""

    hosts: dict[str, HostBench]
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    other_device: dict[str, str] = field(default_factory=dict)
    judged: bool = False
    note: str | None = None

    @property
    def alpha_each_host(self) -> float | None:
        """The level each host was judged at (the check's, shared among the hosts judged); None when not judged."""
        judged = sum(1 for bench in self.hosts.values() if bench.verdict is not None)
        return ALPHA_CHECK / judged if self.judged and judged else None

    def named(self, verdict: str) -> list[str]:
        """The hosts with `verdict`, by name."""
        return sorted(host for host, bench in self.hosts.items() if bench.verdict == verdict)

    @property
    def outliers(self) -> list[str]:
        """Hosts the statistics named slower or faster than the rest of the fleet."""
        return sorted(host for host, bench in self.hosts.items() if bench.named)

    def to_json(self) -> JSONObject:
        """The fleet's `bench` object: per host its figures, verdict and benchmark rows (with their MDS)."""
        return {"judged": self.judged, "note": self.note, "min_hosts": MIN_HOSTS,
                "alpha_each_host": self.alpha_each_host, "slower": self.named("slower"),
                "faster": self.named("faster"), "inconclusive": self.named("inconclusive"),
                "hosts": {host: self.hosts[host].to_json() for host in sorted(self.hosts)},
                "other_device": dict(sorted(self.other_device.items())),
                "failures": dict(sorted(self.failures.items()))}


def _row_json(row: VerdictRow) -> JSONObject:
    """One benchmark of a host: its figure and the fleet's, the change, the resolution, the verdict and why."""
    return {"name": row.get("name"), "unit": row.get("unit"), "host": row.get("after"), "fleet": row.get("before"),
            "change_pct": row.get("change_pct"), "mds_pct": row.get("mds_pct"),
            "runs_spread_pct": row.get("spread_pct"), "verdict": row.get("verdict"), "reason": fleet_reason(row),
            "disturbance": row.get("disturbance"), "between_hosts": _between_json(row), "text": row_text(row)}


def fleet_reason(row: Mapping[str, Any]) -> str | None:
    """Why a benchmark of a host could not be decided, in the fleet's terms (a check's reason speaks of one host's
    sessions and of `driftcheck try`, which a fleet has no use for); None for a decided or unchanged one."""
    if row.get("verdict") != "inconclusive":
        return None
    if row.get("direction") == "missing":
        return str(row.get("reason") or "measured on one side only")
    if row.get("held_by") == "load" and row.get("disturbance"):
        sides = _SIDE.sub(lambda m: f"{'fleet' if m[1] == 'A' else 'this host'} {m[2]}", str(row["disturbance"]))
        return f"disturbed by other work ({sides}): that could explain it"
    if row.get("held_by") == "runs":
        return (f"{row.get('reason')}: its runs' median lies beyond it, but a run that stalled could explain "
                "that (more runs, --runs, would tell)")
    mds, runs_spread = _number(row.get("mds_pct")), _number(row.get("spread_pct")) or 0.0
    between = row.get("between_sessions")
    hosts_spread = (_number(between.get("spread_pct")) if isinstance(between, Mapping) else None) or 0.0
    hosts = between.get("sessions") if isinstance(between, Mapping) else None
    runs = row.get("runs")
    # The others' spread s^2 holds the machines' own differences and each figure's run noise, median_variance(n)
    # sw^2 for the median of n runs (not a mean's sw^2 / n: 0.45 sw^2 for three runs): where the runs' part is
    # most of it, more runs would narrow the MDS; else only more hosts (more degrees of freedom) or steadier
    # machines would.
    per_host = round(runs[0] / hosts) if isinstance(runs, list) and runs and isinstance(hosts, int) and hosts else 0
    runs_part = (math.log1p(runs_spread / 100.0) ** 2 * median_variance(per_host)
                 if per_host >= 1 and row.get("spread_measured") else 0.0)
    if runs_part > math.log1p(hosts_spread / 100.0) ** 2 / 2.0:
        where = f"runs spread ±{runs_spread:.1f}% on these hosts (more runs, --runs, would narrow it)"
    else:
        where = f"the other {hosts} hosts differ by ±{hosts_spread:.1f}% between themselves"
    return f"{where}: shifts under ±{percent_text(mds)} cannot be told" if mds is not None else where


def percent_text(pct: float) -> str:
    """`12.3%`, or `>1000%` where a figure that wide only says the fleet cannot tell (a few hosts far apart)."""
    return f"{pct:.1f}%" if pct < 1000.0 else ">1000%"


def row_text(row: Mapping[str, Any]) -> str:
    """`gemm_fp32_1024_gflops 21.3 GFLOP/s, fleet 39.0: -45.4% (MDS ±20.1%): slower`, with why when undecided."""
    host, fleet, unit = _number(row.get("after")), _number(row.get("before")), str(row.get("unit") or "")
    figures = f"{host:.4g} {unit}, fleet {fleet:.4g}".replace("  ", " ") if host and fleet else "not compared"
    change, mds = _number(row.get("change_pct")), _number(row.get("mds_pct"))
    text = f"{row.get('name')} {figures}"
    if change is not None:
        text += f": {change:+.1f}%"
    if mds is not None:
        text += f" (MDS ±{percent_text(mds)})"
    text += f": {row.get('verdict')}"
    reason = fleet_reason(row)
    return text + (f" - {reason}" if reason else "")


def _between_json(row: VerdictRow) -> JSONObject | None:
    """The spread between the other hosts that the verdict counted (±%, over how many hosts, measured or not)."""
    between = row.get("between_sessions")
    if between is None:
        return None
    return {"spread_pct": between["spread_pct"], "measured": between["measured"], "hosts": between["sessions"],
            "df": between["df"]}


def _results(record: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    results = record.get("results")
    return results if isinstance(results, Mapping) else {}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _log_figure(figures: Sequence[RunFigure]) -> float:
    """A host's figure of one benchmark: the median of the logs of its run medians (for two runs, their mean)."""
    return statistics.median(logs(figures))


def _runs_spread(sides: Sequence[Sequence[RunFigure]]) -> tuple[float, bool]:
    """The run-to-run spread (log standard deviation) pooled within the hosts that took two runs or more, and
    whether any did; MIN_SPREAD where none did. It floors the prediction's spread (`runs_floor`)."""
    squares = df = 0.0
    for figures in sides:
        if len(figures) > 1:
            values = logs(figures)
            squares += sum((x - statistics.fmean(values)) ** 2 for x in values)
            df += len(values) - 1
    return (max(math.sqrt(squares / df), MIN_SPREAD), True) if df else (MIN_SPREAD, False)


def _spread_pct(centres: Sequence[float]) -> float:
    """How far the other hosts' figures lie from each other, as ±% (their sample standard deviation in logs)."""
    return math.expm1(max(statistics.stdev(centres), MIN_SPREAD)) * 100.0


_NO_CONTROL = ("controls not used: across machines the user's own figures are compared, since a machine slower "
               "at everything is the node looked for")


def judge_benchmark(name: str, host: Mapping[str, Any] | None, others: Sequence[Mapping[str, Any]],
                    family: int = 1) -> VerdictRow:
    """One benchmark of a host (`host`: its result entry, None where it did not measure it) against the other
    hosts' entries of it: the prediction test of `driftcheck.stats.prediction` at the check's level shared
    among `family` hosts, in the row shape of a check's verdict (`before` the fleet's centre, `after` this
    host; `between_sessions` the other hosts' spread with their count and degrees of freedom)."""
    entry = host or (others[0] if others else {})
    row: VerdictRow = {"name": name, "unit": str(entry.get("unit", "")), "before": None, "after": None,
                       "ratio": None, "change_pct": None, "verdict": "inconclusive", "direction": "missing",
                       "significant": False, "mds_pct": None, "spread_pct": None, "spread_measured": False,
                       "runs": [0, 0], "disturbance": None, "reason": None, "held_by": None,
                       "control": {"recorded": False, "note": _NO_CONTROL}}
    mine = run_figures(host) if host is not None else []
    theirs = [figures for figures in (run_figures(other) for other in others) if figures]
    row["runs"] = [sum(len(figures) for figures in theirs), len(mine)]
    if not mine:
        row["reason"] = "not measured on this host" if host is None else "no usable median on this host"
        return row
    if len(theirs) < MIN_OTHERS:
        row["reason"] = (f"measured on {len(theirs)} other host{'s' if len(theirs) != 1 else ''}: "
                         f"{MIN_OTHERS} needed to tell how far the fleet's machines differ")
        return row
    alpha = ALPHA_CHECK / max(family, 1)
    centres = [_log_figure(figures) for figures in theirs]
    spread, measured = _runs_spread([*theirs, mine])
    # A host's figure varies at least by what its runs' noise leaves in their median, however closely the others'
    # figures happen to agree (runs_floor): the prediction's spread is never taken below that.
    per_host = round(statistics.median(len(figures) for figures in theirs))
    floor = runs_floor(spread, per_host) if measured else MIN_SPREAD
    test = predict_member(_log_figure(mine), centres, alpha, least_spread=floor)
    ratio = math.exp(test.shift)
    # A benchmark two other hosts measured far apart has one degree of freedom, t near 500 at 1%/8: its MDS can pass
    # exp's range (an OverflowError from expm1). Beyond ±1000% percent_text says only that much; past a millionfold
    # the figure says nothing more.
    mds = max(math.expm1(min(test.mds_log, _MAX_MDS_LOG)), MIN_EFFECT)
    row.update({"before": math.exp(statistics.fmean(centres)), "after": math.exp(_log_figure(mine)),
                "ratio": ratio, "change_pct": round((ratio - 1.0) * 100.0, 2), "mds_pct": round(mds * 100.0, 2),
                "spread_pct": round(math.expm1(spread) * 100.0, 2), "spread_measured": measured,
                "between_sessions": {"spread_pct": round(_spread_pct(centres), 2), "measured": True,
                                     "sessions": test.others, "df": test.df},
                "t": round(test.t, 4), "p": test.p})
    higher = higher_is_better(entry)
    better = (ratio > 1.0) == higher
    # The side whose disturbance pushes the way the shift went: the others' for a gain, this host's for a loss.
    explained = disturbance_explains(abs(1.0 - min(ratio, 1.0 / ratio)),
                                     [f for figures in theirs for f in figures] if better else mine)
    row["disturbance"] = disturbance_summary([f for figures in theirs for f in figures], mine)
    called = abs(test.shift) >= test.mds_log and abs(ratio - 1.0) >= MIN_EFFECT
    # Each of the host's runs must lie beyond the MDS on the shift's side, not only their median: one run that
    # stalled (not every stall is flagged as disturbed) moves a median of two (their mean) by half its stall, two of
    # three move a median of three, while a slow host is slow in every run. Stricter than the test alone, so the
    # level only falls. Measured on 8 quiet real-sshd hosts:
    # a GEMM run at 103 beside 198 named an unchanged host 24% slower, a launch run 7% slow named another.
    centre = statistics.fmean(centres)
    within = [run for run in logs(mine) if (run - centre) * math.copysign(1.0, test.shift) < test.mds_log]
    if called and within and not explained:
        row.update({"verdict": "inconclusive", "direction": "inconclusive", "held_by": "runs",
                    "reason": f"{len(within)} of its {len(mine)} runs within the MDS of the fleet's centre"})
        return row
    if called and not explained:
        direction = "faster" if better else "slower"
        row.update({"verdict": direction, "direction": direction, "significant": True})
    elif not called and abs(test.shift) <= max(test.se, math.log1p(MIN_EFFECT)) and mds <= RESOLVED_MDS:
        # No further from the others' centre than one more host of theirs typically lies, and resolved.
        row.update({"verdict": "unchanged", "direction": "unchanged"})
    else:
        row.update({"verdict": "inconclusive", "direction": "inconclusive"})
        if explained:
            # Beyond its MDS or not, a shift the load could explain is held by it: more runs would not help.
            row["held_by"] = "load"
    return row


def judge_host(host: str, records: Mapping[str, Mapping[str, Any]]) -> list[VerdictRow]:
    """`host`'s record against every other host of `records`, benchmark by benchmark (sorted by name), each at
    the check's level shared among all the hosts of `records` (they are all asked about at once)."""
    mine = _results(records[host])
    others = [_results(record) for name, record in sorted(records.items()) if name != host]
    names = sorted(set(mine) | {name for results in others for name in results})
    return [judge_benchmark(name, mine.get(name), [results[name] for results in others if name in results],
                            family=len(records)) for name in names]


def host_verdict(rows: Sequence[VerdictRow]) -> str:
    """A host's verdict from its benchmarks': slower where any is slower, else faster where any is faster,
    else inconclusive where any is, else unchanged. Benchmarks measured on one side only count for nothing."""
    verdicts = {row.get("verdict") for row in rows if row.get("direction") != "missing"}
    return next((v for v in VERDICTS[:3] if v in verdicts), "unchanged")


def _host_bench(host: str, record: Mapping[str, Any]) -> HostBench:
    results = _results(record)
    figures = {name: float(m) for name, entry in results.items() if (m := _number(entry.get("median"))) is not None}
    units = {name: str(entry.get("unit", "")) for name, entry in results.items()}
    runs = record.get("runs")
    return HostBench(host, str(record.get("suite") or ""), str(record.get("device") or "cpu"),
                     runs if isinstance(runs, int) and not isinstance(runs, bool) else 1, figures, units)


def judge_fleet(records: Mapping[str, Mapping[str, Any]], failures: Mapping[str, str] | None = None) -> FleetBench:
    """Every host of `records` (host → its `bench` probe data) judged against the others of its device; the
    hosts of `failures` (host → why its bench failed) listed as they are. With fewer than MIN_HOSTS comparable
    hosts nothing is judged, and `note` says why."""
    devices = Counter(str(record.get("device") or "cpu") for record in records.values())
    # The fleet's device: the one most hosts measured on (ties to the name that sorts first, for a stable choice).
    device = min(devices, key=lambda d: (-devices[d], d)) if devices else "cpu"
    comparable = {host: record for host, record in records.items() if str(record.get("device") or "cpu") == device}
    other_device = {host: f"measured on {record.get('device') or 'cpu'}, the fleet on {device}: not compared"
                    for host, record in records.items() if host not in comparable}
    out = FleetBench({host: _host_bench(host, records[host]) for host in sorted(records)},
                     {host: dict(record) for host, record in records.items()}, dict(failures or {}), other_device)
    if len(comparable) < MIN_HOSTS:
        # With no host measured there is no fleet device to name ("cpu" above is only a default).
        measured = (f"{len(comparable)} host{'s' if len(comparable) != 1 else ''} measured on {device}"
                    if comparable else "no host measured")
        out.note = f"fleet too small to judge by measurement: {measured}, {MIN_HOSTS} needed"
        return out
    out.judged = True
    for host in sorted(comparable):
        rows = judge_host(host, comparable)
        bench = out.hosts[host]
        out.hosts[host] = HostBench(bench.host, bench.suite, bench.device, bench.runs, bench.figures, bench.units,
                                    rows, host_verdict(rows))
    return out
