"""The fleet's "Measured" section (`fleet --bench`) as text and Markdown, beside the configuration outliers;
JSON is `FleetBench.to_json()`."""

from __future__ import annotations

from driftcheck.analysis.fleet_bench import FleetBench, HostBench, percent_text, row_text
from driftcheck.snapshot.printable import printable


def _headline(bench: FleetBench) -> str:
    measured = len(bench.hosts)
    first = next(iter(bench.hosts.values()), None)
    if first is None:
        return "no host measured"
    what = f"{first.suite} suite on {first.device}, {first.runs} run{'s' if first.runs != 1 else ''} a host"
    line = f"{measured} host{'s' if measured != 1 else ''} measured ({what})"
    if bench.judged:
        line += ("; each host compared with the prediction the other hosts' figures give for one more of them "
                 "(their spread between machines, runs included)")
        if bench.alpha_each_host is not None:
            line += f", each host at {100 * bench.alpha_each_host:.2g}% (the check's 1% shared among the hosts)"
    return line


def _resolution(host: HostBench) -> str:
    """`MDS ±4.1% to ±31.0%`: how finely this host's benchmarks could tell a shift."""
    mds = sorted(m for row in host.benchmarks() if isinstance(m := row.get("mds_pct"), (int, float)))
    if not mds:
        return "no benchmark compared"
    low, high = percent_text(mds[0]), percent_text(mds[-1])
    return f"MDS ±{low}" if low == high else f"MDS ±{low} to ±{high}"


def _host_lines(host: HostBench) -> list[str]:
    """A named or inconclusive host: its verdict, then the benchmarks that decided it (or could not)."""
    shown = host.benchmarks("slower", "faster") if host.named else host.benchmarks("inconclusive")
    lines = [f"  {printable(host.host)}: {host.verdict} ({_resolution(host)})"]
    lines += [f"    {printable(row_text(row))}" for row in shown]
    return lines


def measured_lines(bench: FleetBench) -> list[str]:
    """The Measured section as lines: the named hosts with the benchmarks that name them, the inconclusive
    ones with why, one line for the rest, then the hosts whose bench failed or was not comparable."""
    lines = ["Measured:", f"  {_headline(bench)}"]
    if not bench.judged:
        if bench.note:
            lines.append(f"  {bench.note}")
        for host in sorted(bench.hosts.values(), key=lambda h: h.host):
            figures = ", ".join(f"{name} {value:.4g} {host.units.get(name, '')}".rstrip()
                                for name, value in sorted(host.figures.items()))
            lines.append(f"  {printable(host.host)}: {figures or 'no figures'}")
    for verdict in ("slower", "faster", "inconclusive"):
        for name in bench.named(verdict):
            lines += _host_lines(bench.hosts[name])
    unchanged = bench.named("unchanged")
    if unchanged:
        lines.append(f"  within the fleet's spread (no benchmark shifted beyond its MDS): "
                     f"{', '.join(printable(h) for h in unchanged)}")
    for name, why in sorted(bench.other_device.items()):
        lines.append(f"  {printable(name)}: {printable(why)}")
    if bench.failures:
        lines.append("  bench failed:")
        lines.extend(f"    {printable(name)}: {printable(why)}" for name, why in sorted(bench.failures.items()))
    for verdict in ("slower", "faster"):
        named = bench.named(verdict)
        if named:
            lines.append(f"{verdict} by measurement: {', '.join(printable(h) for h in named)}")
    return lines


def render_measured_text(bench: FleetBench) -> str:
    """The Measured section for a terminal."""
    return "\n".join(measured_lines(bench)) + "\n"


def render_measured_markdown(bench: FleetBench) -> str:
    """The Measured section as Markdown: a heading, then the text lines as a list."""
    lines = measured_lines(bench)
    body = [f"- {line.strip()}" if line.startswith("  ") and not line.startswith("    ") else
            f"  - {line.strip()}" if line.startswith("    ") else f"**{line}**" for line in lines[1:]]
    return "\n".join(["", "## Measured", "", *body]) + "\n"
