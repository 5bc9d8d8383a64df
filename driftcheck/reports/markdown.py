"""`report.md`: a snapshot as a GitHub comment — the summary table up front, each probe in a
collapsible `<details>` section, and with a reference snapshot the explanation of what changed.

GitHub refuses a comment over 65,536 characters. The summary, the explanation and the reader's
instructions are always kept; probe sections are cut (largest first, a line at a time) until the whole
fits, and the report says what was cut and that every fact is in the snapshot file beside it.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

from driftcheck.reports.summary import header_line, summary_rows
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.printable import printable
from driftcheck.snapshot.probe_names import PROBE_NAMES

GITHUB_LIMIT = 65_536
# Room kept under the limit for what GitHub counts differently (line ends, entities it expands).
MARGIN = 1_536


@dataclass
class _Section:
    name: str
    head: str
    lines: list[str]
    kept: int = -1
    cut_lines: int = field(default=0)

    def body_length(self, kept: int) -> int:
        return sum(len(line) + 1 for line in self.lines[:kept])


_PLAIN_SEGMENT = re.compile(r"^[A-Za-z0-9_\-]+$")


def _child_path(prefix: str, key: str) -> str:
    """`format_path` one step at a time (the same text, without rebuilding the whole path per leaf)."""
    if _PLAIN_SEGMENT.match(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{json.dumps(key, ensure_ascii=False)}]"


def _scalar(value: object) -> str:
    if isinstance(value, str):
        # One line whatever it holds: a newline in a value would end the code block and write Markdown.
        return printable(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def fact_lines(data: object) -> list[str]:
    """`path: value` for every leaf, as `driftcheck show --full` prints them (snapshot.paths.leaves), built faster:
    a report flattens tens of thousands of facts and must stay well under a second."""
    lines: list[str] = []
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict) and value:
            # Reversed onto the stack so that keys come off in sorted order.
            stack.extend((_child_path(path, str(k)), value[k]) for k in sorted(value, reverse=True))
        else:
            lines.append(f"{path}: {_scalar(value)}")
    return lines


def _code_span(text: str) -> str:
    """`text` as inline code whatever it holds: control characters escaped, a fence longer than any backtick
    run inside it (a label holding a backtick would otherwise end the span and write Markdown of its own)."""
    text = printable(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence}{text}{fence}" if not longest else f"{fence} {text} {fence}"


def _cell(text: str) -> str:
    """A table cell: control characters shown, pipes escaped, HTML inert, no line breaks."""
    return html.escape(printable(text), quote=False).replace("|", "\\|")


def summary_table(snapshot: Snapshot) -> str:
    """The one-screen summary as a GFM table (section, fact, value)."""
    lines = ["| | fact | value |", "| --- | --- | --- |"]
    previous = None
    for row in summary_rows(snapshot):
        section = row.section if row.section != previous else ""
        previous = row.section
        lines.append(f"| {_cell(section)} | {_cell(row.label)} | {_cell(row.value)} |")
    return "\n".join(lines) + "\n"


def _fence(lines: list[str]) -> str:
    longest = max((len(line) - len(line.lstrip("`")) for line in lines if line.startswith("`")), default=0)
    return "`" * max(3, longest + 1)


def _probe_sections(snapshot: Snapshot) -> list[_Section]:
    order = {name: i for i, name in enumerate(PROBE_NAMES)}
    sections = []
    for name in sorted(snapshot.probes, key=lambda n: (order.get(n, len(order)), n)):
        outcome = snapshot.probes[name]
        status = outcome.get("status")
        duration = outcome.get("duration_s")
        timing = f" ({duration:.2f} s)" if isinstance(duration, (int, float)) and duration else ""
        if status == "ok":
            lines = fact_lines(outcome.get("data") or {})
        else:
            lines = [str((outcome.get("error") or {}).get("message") or status)]
        head = f"<b>{html.escape(name)}</b> {html.escape(str(status))}{timing}, {len(lines)} fact(s)"
        sections.append(_Section(name, head, lines, kept=len(lines)))
    report = (snapshot.document.get("host") or {}).get("report")
    if isinstance(report, dict):
        lines = [f"tool: {report.get('tool')}, format: {report.get('format')} ({report.get('variant')})"]
        lines += [f"{key}: {value}" for key, value in sorted((report.get("fields") or {}).items())]
        lines += [f"unclaimed: {line}" for line in report.get("unclaimed") or []]
        sections.append(_Section("imported report", "<b>imported report</b>: raw fields and unclaimed lines",
                                 lines, kept=len(lines)))
    return sections


def _render_section(section: _Section, snapshot_file: str) -> str:
    kept = section.lines[:section.kept]
    fence = _fence(kept)
    cut = len(section.lines) - section.kept
    note = f"\n\n_{cut} more line(s) cut here to fit GitHub's limit; all are in `{snapshot_file}`._" if cut else ""
    body = "\n".join(kept)
    return (f"<details>\n<summary>{section.head}</summary>\n\n{fence}text\n{body}\n{fence}{note}\n\n</details>\n")


def _instructions(snapshot: Snapshot, snapshot_file: str, signer: str | None) -> str:
    # Never `verify --trust <the key that signed it>`: a forged report would vouch for itself. The reader
    # compares the fingerprint with what they know of the sender's key, learned some other way.
    verify = (f"`driftcheck verify {snapshot_file}`: it was signed by the key `{signer}`; compare that "
              "fingerprint with what you know of the sender's key (their `driftcheck key`, received another way) "
              "before you trust it" if signer else f"`driftcheck verify {snapshot_file}` (it is not signed)")
    return (f"> The snapshot is attached as `{snapshot_file}`. Check it with {verify}. Compare it with your "
            f"machine with `driftcheck snapshot && driftcheck explain {snapshot_file} @latest`.\n")


def render_report(snapshot: Snapshot, snapshot_file: str, signer: str | None, changes: str | None = None,
                  against: str | None = None, limit: int = GITHUB_LIMIT - MARGIN) -> str:
    """The Markdown report of `snapshot`, under `limit` characters; `changes` is explain's Markdown."""
    parts = [f"## driftcheck: {html.escape(printable(snapshot.host_name))}\n",
             f"{_code_span(header_line(snapshot, signer))}\n",
             _instructions(snapshot, snapshot_file, signer),
             summary_table(snapshot)]
    if changes is not None:
        parts.append(f"\n### What changed since `{against}`\n\n{_capped(changes.strip(), limit // 2)}\n")
    head = "\n".join(parts)
    sections = _probe_sections(snapshot)
    footer_room = 400 + 80 * len(sections)
    _fit(sections, limit - len(head) - footer_room, snapshot_file)
    body = "\n### Every probe\n\n" + "\n".join(_render_section(s, snapshot_file) for s in sections)
    cut = [s for s in sections if s.kept < len(s.lines)]
    footer = ""
    if cut:
        what = ", ".join(f"{s.name} ({len(s.lines) - s.kept} of {len(s.lines)} lines)" for s in cut)
        footer = (f"\n_Cut to stay under GitHub's {GITHUB_LIMIT:,}-character comment limit: {what}. Every fact is "
                  f"in `{snapshot_file}` (`driftcheck show {snapshot_file} --full`)._\n")
    return head + body + footer


def _capped(text: str, limit: int) -> str:
    """`text` cut at a line end to `limit` characters, saying so."""
    if len(text) <= limit:
        return text
    kept = text[:limit].rsplit("\n", 1)[0]
    return kept + (f"\n\n_The explanation goes on ({len(text) - len(kept):,} characters cut): run "
                   "`driftcheck explain` on the attached snapshot._")


# Sections a reader of a performance report needs whole; the long lists (packages, kernels, the whole
# environment, whose performance variables the summary already shows) are cut first.
_KEEP_WHOLE = ("python", "torch", "gpu", "pcie", "nccl", "system", "process", "bench", "imported report")


def _overhead(section: _Section, snapshot_file: str) -> int:
    """Characters of a rendered section besides its body lines (tags, fences, the cut note)."""
    return len(_render_section(_Section(section.name, section.head, [], kept=0), snapshot_file)) + 120


def _fit(sections: list[_Section], budget: int, snapshot_file: str) -> None:
    """Cut the sections' bodies (whole lines from the end) so that all of them fit `budget` characters.

    The sections a performance reader needs stay whole when they fit together; the budget left is shared
    out by water-filling: a section smaller than an equal share keeps everything, the rest split what
    remains, so one huge list cannot crowd out the others.
    """
    full = {id(s): s.body_length(len(s.lines)) for s in sections}
    budget -= sum(_overhead(s, snapshot_file) for s in sections)
    if sum(full.values()) <= budget:
        return
    whole = [s for s in sections if s.name in _KEEP_WHOLE]
    if sum(full[id(s)] for s in whole) + 2_000 * (len(sections) - len(whole)) <= budget:
        budget -= sum(full[id(s)] for s in whole)
        rest = [s for s in sections if s.name not in _KEEP_WHOLE]
    else:
        rest = list(sections)
    allot: dict[int, int] = {}
    remaining = sorted(rest, key=lambda s: full[id(s)])
    left = max(budget, 0)
    while remaining:
        share = left // len(remaining)
        section = remaining.pop(0)
        allot[id(section)] = min(full[id(section)], share)
        left -= allot[id(section)]
    for section in rest:
        room, kept = allot[id(section)], 0
        for line in section.lines:
            room -= len(line) + 1
            if room < 0:
                break
            kept += 1
        section.kept = kept
