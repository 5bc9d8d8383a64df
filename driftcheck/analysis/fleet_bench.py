"""Slow nodes by measurement: every host of a fleet ran the calibrated suite, and each is judged against the
others with the statistics of a check against the past (`driftcheck.analysis.bench_verdicts`).

For host H, the other hosts' records are the sessions of one reference state, each host one session: the
spread of the fleet's machines around their common speed is then exactly the between-session spread a check
counts (`driftcheck.analysis.sessions`, one-way random-effects ANOVA), and the reference record is the others'
runs pooled. H's record is compared with it by `compare_records`, each benchmark with its resolution (MDS):
a host is named `slower` or `faster` only where a benchmark's shift lies beyond its MDS, `inconclusive` where
the records cannot tell, and nothing is said of the rest.

The figures compared are the user's own (raw), never the control-normalised ones: a check's control excuses
a shift the whole machine shows (a clock, a neighbour) because a check asks what changed on one machine; across
a fleet, a machine that is slower at everything is the very node being looked for (a CPU quota, a throttled
clock), and the controls of different machines differ by just that. So each record is judged without its
control, as a record from before the control existed is.

The comparison is deliberately the check's and not a sharper one: it counts the reference as one session
(2 sb^2 in the shift's variance where pooled others would allow (1 + 1/k) sb^2) and the pooled runs' spread
holds some of the machines' spread again, so a host is named less readily than the data alone would allow.
Leaving H out of its own reference keeps a slow host from widening the spread it is judged by; a slow host in
the others' reference widens theirs, which makes them less likely to be named, never more.

With fewer than MIN_HOSTS hosts measured nothing is judged: two hosts that differ say nothing of which one
is slow.
"""

from __future__ import annotations

import copy
import math
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftcheck.analysis.bench_verdicts import SHIFTS, VerdictRow, compare_records
from driftcheck.analysis.sessions import between_sessions
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.stats.comparison import ALPHA_CHECK
from driftcheck.store.sessions import BenchSession

# The fewest hosts that measured before any is judged: each host then has at least two others to be
# compared with, so a difference has a majority to stand against.
MIN_HOSTS = 3
# A host's verdict, from its benchmarks': a shift either way names it; `unchanged` hosts are not named.
VERDICTS = ("slower", "faster", "inconclusive", "unchanged")
# A side of a check's disturbance summary (`A 2/3, B 1/3 runs disturbed`): the fleet and this host here.
_SIDE = re.compile(r"\b([AB]) (\d+/\d+)")
# The state every host's record is a session of: the fleet, as one unchanged state.
_FLEET_STATE = "fleet"


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
    mds, runs_spread = _number(row.get("mds_pct")), _number(row.get("spread_pct")) or 0.0
    between = row.get("between_sessions")
    hosts_spread = _number(between.get("spread_pct")) if isinstance(between, Mapping) else None
    runs = row.get("runs")
    counts = runs if isinstance(runs, list) and len(runs) == 2 and all(isinstance(n, int) and n for n in runs) \
        else [1, 1]
    within = math.log1p(runs_spread / 100.0) ** 2 * (1.0 / counts[0] + 1.0 / counts[1])
    across = 2.0 * math.log1p((hosts_spread or 0.0) / 100.0) ** 2
    where = (f"the fleet's machines differ by ±{hosts_spread:.1f}% between themselves" if across > within
             else f"runs spread ±{runs_spread:.1f}% on these hosts (more runs, --runs, would narrow it)")
    return f"{where}: shifts under ±{mds:.1f}% cannot be told" if mds is not None else where


def row_text(row: Mapping[str, Any]) -> str:
    """`gemm_fp32_1024_gflops 21.3 GFLOP/s, fleet 39.0: -45.4% (MDS ±20.1%): slower`, with why when undecided."""
    host, fleet, unit = _number(row.get("after")), _number(row.get("before")), str(row.get("unit") or "")
    figures = f"{host:.4g} {unit}, fleet {fleet:.4g}".replace("  ", " ") if host and fleet else "not compared"
    change, mds = _number(row.get("change_pct")), _number(row.get("mds_pct"))
    text = f"{row.get('name')} {figures}"
    if change is not None:
        text += f": {change:+.1f}%"
    if mds is not None:
        text += f" (MDS ±{mds:.1f}%)"
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


def _runs_of(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A benchmark's per-run entries (a single-run result without `runs` is its own one run)."""
    runs = entry.get("runs")
    return [run for run in runs if isinstance(run, Mapping)] if isinstance(runs, list) and runs else [entry]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def pooled_record(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One record holding every run of `records` (the other hosts'), benchmark by benchmark: the reference a
    host is compared with. Its median is the median of all those runs' medians."""
    results: dict[str, dict[str, Any]] = {}
    for name in sorted({name for record in records for name in _results(record)}):
        entries = [_results(record)[name] for record in records if name in _results(record)]
        runs = [dict(run) for entry in entries for run in _runs_of(entry)]
        medians = [m for m in (_number(run.get("median")) for run in runs) if m is not None]
        first = entries[0]
        results[name] = {"unit": first.get("unit", ""), "higher_is_better": first.get("higher_is_better"),
                         "median": statistics.median(medians) if medians else None, "runs": runs}
    device = next((str(r["device"]) for r in records if r.get("device")), "cpu")
    return {"device": device, "results": results}


def fleet_between(records: Mapping[str, Mapping[str, Any]]) -> dict[str, JSONObject]:
    """The between-session spread of each benchmark with every host's record one session of one state: how far
    the fleet's machines differ from each other, beyond each one's run-to-run noise."""
    sessions = [BenchSession(_FLEET_STATE, host, "", name,
                             {"higher_is_better": entry.get("higher_is_better"), "runs": _runs_of(entry)})
                for host, record in sorted(records.items()) for name, entry in _results(record).items()]
    return between_sessions(sessions)


def host_verdict(rows: Sequence[VerdictRow]) -> str:
    """A host's verdict from its benchmarks': slower where any is slower, else faster where any is faster,
    else inconclusive where any is, else unchanged. Benchmarks measured on one side only count for nothing."""
    verdicts = {row.get("verdict") for row in rows if row.get("direction") != "missing"}
    return next((v for v in VERDICTS[:3] if v in verdicts), "unchanged")


def without_control(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `record` with no control figures: what a verdict on the raw figures reads."""
    bare = copy.deepcopy(dict(record))
    bare.pop("control", None)
    for entry in _results(bare).values():
        if isinstance(entry, dict):
            entry.pop("control", None)
            for run in entry.get("runs") or []:
                if isinstance(run, dict):
                    run.pop("control", None)
    return bare


def judge_host(host: str, records: Mapping[str, Mapping[str, Any]]) -> list[VerdictRow]:
    """`host`'s record compared with the pooled records of every other host in `records` on the raw figures,
    the others' spread between machines counted as the between-session spread (on both sides, so neither
    record's own `between_sessions` from its host's store decides). Every host of `records` is asked about at
    once, so each is judged at its share of the check's level (Bonferroni over the hosts): an unchanged fleet
    of N hosts then names one about as often as one check names an unchanged machine, not N times as often."""
    bare = {name: without_control(record) for name, record in records.items()}
    others = {name: record for name, record in bare.items() if name != host}
    spread = fleet_between(others)
    reference = {**pooled_record(list(others.values())), "between_sessions": spread}
    measured = {**bare[host], "between_sessions": spread}
    measured.pop("looks", None)
    for entry in _results(measured).values():
        if isinstance(entry, dict):
            entry.pop("looks", None)  # one look at every run: the fleet planned no more runs
    return compare_records(reference, measured, family=len(records))


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
