"""The peer report as text (terminal) and Markdown (a ticket); JSON is `PeerReport.to_json()`."""

from __future__ import annotations

from driftcheck.analysis.explain.render import FOLD_BELOW, split_folded
from driftcheck.analysis.peers import Finding, PeerReport, describe_value


def fact_label(path: str) -> str:
    """`probes.env.data.vars.X` → `env.vars.X`: the probe and the fact, as people name them."""
    label = path.removeprefix("probes.")
    probe, dot, rest = label.partition(".")
    return f"{probe}.{rest.removeprefix('data.')}" if dot and rest.startswith("data.") else label


def _headline(report: PeerReport) -> str:
    taken = len(report.hosts)
    failed = len(report.failures)
    against = "the majority" if report.reference == "majority" else report.reference
    line = f"fleet: {taken} snapshot{'s' if taken != 1 else ''}"
    if failed:
        line += f", {failed} host{'s' if failed != 1 else ''} failed"
    return line + f"; each host compared with {against}"


def _sentence(finding: Finding, total: int, reference_name: str) -> list[str]:
    reference = describe_value(finding.reference, finding.reference_present)
    where = (f"{finding.holders} of {total} hosts: {reference}" if reference_name == "majority"
             else f"{reference_name}: {reference}")
    return [f"{o.host}: {fact_label(finding.path)} = {describe_value(o.value, o.present)} ({where})"
            for o in finding.outliers]


def render_text(report: PeerReport, fold: bool = True) -> str:
    """The peer report for a terminal; with `fold`, findings of no known effect collapse into one line."""
    lines = [_headline(report)]
    majority = report.reference == "majority"
    total = len(report.hosts)
    if total == 0:
        lines.append("no snapshot: nothing to compare")
    elif total == 1 and majority:
        lines.append("only one snapshot: nothing to compare it with")
    elif report.uniform:
        lines.append("uniform: every compared fact is identical across the hosts")
    shown, folded = split_folded(report.findings) if fold else (report.findings, [])
    for rank, finding in enumerate(shown, 1):
        facts = ", ".join(fact_label(p) for p in [finding.path, *finding.also])
        lines.append(f"{rank:>2}. [{finding.category}, {finding.confidence:.2f}] {facts}")
        for sentence, outlier in zip(_sentence(finding, total, report.reference), finding.outliers, strict=True):
            lines.append(f"      {sentence}")
            if outlier.cause:
                lines.append(f"        cause: {outlier.cause}")
            if outlier.fix:
                lines.append(f"        fix: {outlier.fix}")
    if folded:
        names = ", ".join(fact_label(f.path) for f in folded[:3])
        lines.append(f"  + {len(folded)} more difference(s) of no known effect, each below {FOLD_BELOW:.2f}: "
                     f"{names}{', ...' if len(folded) > 3 else ''} (--all lists them)")
    if report.unique_per_host:
        lines.append(f"set aside (a different value on every host, an identity): "
                     f"{', '.join(fact_label(p) for p in report.unique_per_host)}")
    if report.failures:
        lines.append("failed hosts:")
        lines.extend(f"  {host}: {why}" for host, why in sorted(report.failures.items()))
    outliers = report.outlier_hosts()
    if outliers:
        lines.append(f"outliers: {', '.join(outliers)}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: PeerReport) -> str:
    """The peer report as Markdown: a table of findings, failures below."""
    lines = ["## Fleet peer report", "", _headline(report), ""]
    majority = report.reference == "majority"
    total = len(report.hosts)
    if report.findings:
        reference = "Majority" if majority else "Reference"
        lines += [f"| # | Host | Fact | Value | {reference} | Category | Confidence | Fix |",
                  "|---|---|---|---|---|---|---|---|"]
        for rank, finding in enumerate(report.findings, 1):
            ref = describe_value(finding.reference, finding.reference_present)
            if majority:
                ref += f" ({finding.holders} of {total})"
            for outlier in finding.outliers:
                lines.append(f"| {rank} | {_cell(outlier.host)} | `{_cell(fact_label(finding.path))}` | "
                             f"{_cell(describe_value(outlier.value, outlier.present))} | {_cell(ref)} | "
                             f"{finding.category} | {finding.confidence:.2f} | {_cell(outlier.fix or '')} |")
    else:
        lines.append("Uniform: every compared fact is identical across the hosts.")
    if report.failures:
        lines += ["", "### Failed hosts", ""]
        lines += [f"- **{_cell(host)}**: {_cell(why)}" for host, why in sorted(report.failures.items())]
    return "\n".join(lines) + "\n"
