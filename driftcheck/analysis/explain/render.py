"""Human renderings of an explanation: text (colour only when asked, i.e. on a TTY) and markdown.

Deterministic: the same two snapshots give byte-identical output (no clock, no locale, sorted).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypeVar

from driftcheck.analysis.explain.model import NOISE_FLOOR, Explained, Explanation
from driftcheck.analysis.explain.report import reading_order, reading_title
from driftcheck.analysis.partial import not_compared, not_compared_line
from driftcheck.analysis.targets import target_difference
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.printable import printable

if TYPE_CHECKING:
    from driftcheck.analysis.peers import Finding

_COLOURS = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def _paint(text: str, colour: str, enabled: bool) -> str:
    """`text` (facts from the snapshots: control characters escaped) in `colour` when `enabled`."""
    text = printable(text)
    return f"\033[{_COLOURS[colour]}m{text}\033[0m" if enabled else text


def _header(tag: str, snapshot: Snapshot) -> str:
    label = f"  '{printable(snapshot.label)}'" if snapshot.label else ""
    return f"{tag} {snapshot.short_id}  {snapshot.created_at}  {printable(snapshot.host_name)}{label}"


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value, sort_keys=True) if not isinstance(value, str) else value


def _bench_line(row: dict[str, Any]) -> str:
    if "verdict" in row:
        # Rows with a verdict (driftcheck.analysis.bench_verdicts) carry their own wording, MDS included.
        line = f"{row.get('name')}: {_value(row.get('before'))} -> {_value(row.get('after'))}"
        line += f" {row['unit']}" if row.get("unit") else ""
        return line + " " + str(row.get("verdict_text") or row["verdict"])
    ratio = row.get("ratio")
    ratio_text = f"x{ratio:.3f}" if isinstance(ratio, (int, float)) else "x?"
    flag = "significant" if row.get("significant") else "within noise"
    direction = f", {row['direction']}" if row.get("direction") else ""
    unit = f" {row['unit']}" if row.get("unit") else ""
    return (f"{row.get('name')}: {_value(row.get('before'))} -> {_value(row.get('after'))}{unit} "
            f"({ratio_text}{direction}, {flag})")


# Readings listed before "... and N more": they are context, the causes come first.
READINGS_SHOWN = 5


def reading_lines(result: Explained) -> list[str]:
    """The readings that moved (never causes), as context: the first few, or all with `--all`."""
    readings = sorted(result.diff.readings, key=reading_order)
    shown = readings if result.include_volatile else readings[:READINGS_SHOWN]
    lines = [reading_title(change) for change in shown]
    if len(readings) > len(shown):
        lines.append(f"... and {len(readings) - len(shown)} more (--all lists them)")
    return lines


def _confidence_colour(explanation: Explanation) -> str:
    return "red" if explanation.confidence >= 0.5 else "yellow" if explanation.confidence >= 0.2 else "dim"


# Causes below the noise floor that no rule knows (a LANG, a TERM) fold into one line unless asked for with
# --all: the same floor under which `check` does not count a cause as drift.
FOLD_BELOW = NOISE_FLOOR
_FOLDED_CATEGORIES = ("env_var_other", "other")
Foldable = TypeVar("Foldable", Explanation, "Finding")


def split_folded(items: list[Foldable]) -> tuple[list[Foldable], list[Foldable]]:
    """(shown, folded): causes or fleet findings of no known effect under the floor go to `folded` when there
    are two or more (one line for one is no fold); the rest stay in rank order."""
    folded = [e for e in items if e.confidence < FOLD_BELOW and e.category in _FOLDED_CATEGORIES]
    if len(folded) < 2:
        return items, []
    return [e for e in items if e not in folded], folded


def _folded_line(folded: list[Explanation]) -> str:
    names = [e.title.split(" ", 1)[0] for e in folded[:4]]
    more = f", ... ({len(folded)} in all)" if len(folded) > 4 else ""
    return (f"  + {len(folded)} more change(s) of no known effect, each below {FOLD_BELOW:.2f}: "
            f"{', '.join(names)}{more} (--all lists them)")


def explain_text(result: Explained, colour: bool = False, confirmations: dict[int, str] | None = None,
                 fold: bool = True) -> str:
    """`driftcheck explain` as text: ranked causes, notes, unchanged suspects, benchmark evidence.

    With `fold`, causes of no known effect under `FOLD_BELOW` collapse into one line."""
    diff = result.diff
    targets = target_difference(diff.a, diff.b)
    # Two different targets are the first thing to know: every other line compares across them.
    # A side no trusted key signed comes before anything it says.
    lines = [_paint(line, "red", colour) for line in result.signers.lines()] if result.signers else []
    lines += [_paint(targets.line(), "yellow", colour)] if targets else []
    lines += [_header("A", diff.a), _header("B", diff.b)]
    if result.rebooted:
        lines.append(_paint("the machine rebooted between A and B (boot id changed)", "yellow", colour))
    if result.explanations:
        lines.append("")
        lines.append(_paint(f"Likely causes, most likely first ({len(result.explanations)}):", "bold", colour))
        listed, folded = split_folded(result.explanations) if fold else (result.explanations, [])
        for e in listed:
            head = f"{e.rank:>2}. [{e.confidence:.2f}] {e.category}: {e.title}"
            lines.append(_paint(head, _confidence_colour(e), colour))
            lines.append(printable(f"      fix: {e.fix}"))
            if e.why:
                lines.append(_paint(f"      why it matters: {e.why}", "dim", colour))
            shown = list(e.evidence[:3]) + ([f"... and {len(e.evidence) - 3} more"] if len(e.evidence) > 3 else [])
            lines.extend(_paint(f"      evidence: {path}", "dim", colour) for path in shown)
            if confirmations and e.rank in confirmations:
                lines.append(printable(f"      confirm: {confirmations[e.rank]}"))
        if folded:
            lines.append(_paint(_folded_line(folded), "dim", colour))
    else:
        lines.append("")
        lines.append(_paint("No relevant difference explains a performance shift.", "green", colour))
    if result.notes:
        lines.append("")
        lines.append(_paint("Differences that are not drift:", "bold", colour))
        lines.extend(printable(f"  - {n.title}") for n in result.notes)
    readings = reading_lines(result)
    if readings:
        lines.append("")
        lines.append(_paint("Readings that moved on their own (context, never causes):", "bold", colour))
        lines.extend(_paint(f"  ~ {line}", "dim", colour) for line in readings)
    if result.unchanged:
        lines.append("")
        lines.append(_paint(f"Checked and unchanged, held by both sides ({len(result.unchanged)}):", "bold", colour))
        lines.extend(_paint(f"  = {row['title']}", "green", colour) for row in result.unchanged)
    lines += ["", not_compared_line(not_compared(diff.a, diff.b))]
    if result.bench or result.bench_note:
        lines.append("")
        lines.append(_paint("Benchmarks (B against A):", "bold", colour))
        lines.extend(printable(f"  {_bench_line(row)}") for row in result.bench)
        if result.bench_note:
            lines.append(printable(f"  {result.bench_note}"))
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return printable(text.replace("\n", " ")).replace("|", "\\|")


def _md_code(text: str) -> str:
    """`text` as inline code in a table cell: a fence longer than any backtick run inside it."""
    cell = _md_cell(text)
    longest = max((len(run) for run in re.findall(r"`+", cell)), default=0)
    if not longest:
        return f"`{cell}`"
    fence = "`" * (longest + 1)
    return f"{fence} {cell} {fence}"


def _md_side(tag: str, snapshot: Snapshot) -> str:
    """`- **A** `id` time on `host` (label)`: host and label are free text, shown inert (no line break, no
    control character, no Markdown or HTML of their own)."""
    label = f" ({_md_inert(snapshot.label)})" if snapshot.label else ""
    return (f"- **{tag}** `{snapshot.short_id}` {snapshot.created_at} on {_md_code(printable(snapshot.host_name))}"
            f"{label}")


def _md_inert(text: str) -> str:
    """Free text as plain Markdown mid-line: control characters escaped, the punctuation that makes emphasis,
    code, links, HTML or a table cell there backslashed."""
    return re.sub(r"([\\`*_\[\]<>|~])", r"\\\1", printable(text))


def explain_markdown(result: Explained, confirmations: dict[int, str] | None = None) -> str:
    """`driftcheck explain --format markdown`: a section to paste into an issue."""
    diff = result.diff
    lines = ["## driftcheck explain", "", _md_side("A", diff.a), _md_side("B", diff.b)]
    if result.rebooted:
        lines.append("- the machine **rebooted** between A and B (boot id changed)")
    targets = target_difference(diff.a, diff.b)
    if targets:
        lines.insert(2, f"**{targets.line()}**\n")
    if result.signers and result.signers.lines():
        lines[2:2] = [f"> **{_md_cell(line.removeprefix('! '))}**  " for line in result.signers.lines()] + [""]
    lines += ["", "### Likely causes", ""]
    if result.explanations:
        lines += ["| # | confidence | category | cause | fix |", "|---|---|---|---|---|"]
        for e in result.explanations:
            fix = _md_code(e.fix)
            if confirmations and e.rank in confirmations:
                fix += f" — {_md_cell(confirmations[e.rank])}"
            lines.append(f"| {e.rank} | {e.confidence:.2f} | {e.category} | {_md_cell(e.title)} | {fix} |")
    else:
        lines.append("No relevant difference explains a performance shift.")
    if result.notes:
        lines += ["", "### Not drift", ""] + [f"- {_md_cell(n.title)}" for n in result.notes]
    readings = reading_lines(result)
    if readings:
        lines += ["", "### Readings (context, never causes)", ""] + [f"- {_md_cell(line)}" for line in readings]
    if result.unchanged:
        lines += ["", f"### Checked and unchanged ({len(result.unchanged)})", ""] + \
            [f"- {_md_cell(row['title'])}" for row in result.unchanged]
    lines += ["", f"_{not_compared_line(not_compared(diff.a, diff.b))}_"]
    if result.bench or result.bench_note:
        lines += ["", "### Benchmarks", ""] + [f"- {_md_cell(_bench_line(row))}" for row in result.bench]
        if result.bench_note:
            lines.append(f"- {_md_cell(result.bench_note)}")
    return "\n".join(lines) + "\n"
