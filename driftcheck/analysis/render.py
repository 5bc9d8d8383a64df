"""Human renderings of snapshots, logs and diffs (the JSON forms come from the library directly)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from driftcheck.analysis.diff import Change, SnapshotDiff
from driftcheck.snapshot.bulk import without_gc
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import format_path, leaves
from driftcheck.snapshot.printable import printable
from driftcheck.snapshot.probe_names import PROBE_NAMES
from driftcheck.store.snapshots import StoredSnapshot


def _scalar(value: Any) -> str:
    """A fact's value as one printable line (a string's control characters escaped)."""
    if isinstance(value, str):
        return printable(value)
    return printable(json.dumps(value, ensure_ascii=False, sort_keys=True))


def status_summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{status} {count}" for status, count in counts.items())


def snapshot_text(snapshot: Snapshot, signer: str | None) -> str:
    """`driftcheck show` in text: a header, then each probe's outcome and facts."""
    doc = snapshot.document
    lines = [f"snapshot {snapshot.short_id}  {snapshot.created_at}  host {printable(snapshot.host_name)}"
             + (f"  label '{printable(snapshot.label)}'" if snapshot.label else ""),
             f"origin {doc.get('origin', '?')}, driftcheck {doc.get('tool', {}).get('version', '?')}, "
             + (f"signed by {signer}" if signer else "unsigned")]
    # A stored document's keys come back sorted; show the probes in their report order instead.
    order = {name: i for i, name in enumerate(PROBE_NAMES)}
    for name in sorted(doc["probes"], key=lambda n: (order.get(n, len(order)), n)):
        outcome = doc["probes"][name]
        status = outcome["status"]
        duration = outcome.get("duration_s")
        head = f"\n[{name}] {status}" + (f" ({duration:.2f} s)" if isinstance(duration, (int, float)) else "")
        lines.append(head)
        if status != "ok":
            lines.append(f"  {printable(str((outcome.get('error') or {}).get('message', '')))}")
            continue
        lines.extend(f"  {printable(format_path(parts))}: {_scalar(value)}"
                     for parts, value in leaves(outcome.get("data") or {}))
    return "\n".join(lines) + "\n"


def human_size(size_bytes: int) -> str:
    """`812 KiB`, `1.4 MiB`: a size as people read it."""
    if size_bytes < 2**20:
        return f"{size_bytes / 2**10:.0f} KiB"
    return f"{size_bytes / 2**20:.1f} MiB" if size_bytes < 2**30 else f"{size_bytes / 2**30:.2f} GiB"


def log_text(entries: list[StoredSnapshot], size_bytes: int | None = None) -> str:
    """`driftcheck log` as a table, newest first; @N counts down this list from 0. A line marks each
    reboot (a new boot id on a host) between the snapshots on either side of it."""
    if not entries:
        return "no snapshots yet; take one with `driftcheck snapshot`\n"
    header = ("@", "id", "created (UTC)", "host", "boot", "label", "probes")
    # A label (or a host name) with a newline or an ESC sequence would forge a row or drive the terminal.
    rows = [(str(position), entry.id[:12], entry.created_at[:19].replace("T", " "), printable(entry.host),
             printable(entry.boot_id or "")[:8], printable(entry.label or ""), status_summary(entry.status_counts))
            for position, entry in enumerate(entries)]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"

    out = [line(header)]
    for entry, row in zip(entries, rows, strict=True):
        out.append(line(row))
        if entry.new_boot:
            # Newest first: the reboot happened between this snapshot and the older one below.
            out.append(f"{'':{widths[0]}}  -- {printable(entry.host)} rebooted: boot "
                       f"{printable(str(entry.previous_boot_id))[:8]} below, {printable(str(entry.boot_id))[:8]} "
                       "above --\n")
    if size_bytes is not None:
        out.append(f"store: {human_size(size_bytes)} on disk\n")
    return "".join(out)


def _describe_change_value(value: Any) -> str:
    text = _scalar(value)
    return text if len(text) <= 120 else text[:117] + "..."


@without_gc
def diff_text(diff: SnapshotDiff, include_volatile: bool, also: Sequence[Change] = (),
              ranked: Sequence[str] = ()) -> str:
    """`driftcheck diff` in text: changes grouped by category; `also`: hidden changes to show anyway.

    Categories named in `ranked` (those of explain's ranked causes, most likely first) come first, in that
    order; the rest follow alphabetically. Built with the cyclic collector paused, as `report` is.
    """
    a, b = diff.a, diff.b
    lines = [f"{tag} {s.short_id}  {s.created_at}  {printable(s.host_name)}"
             + (f"  '{printable(s.label)}'" if s.label else "") for tag, s in (("A", a), ("B", b))]
    changes = diff.shown(include_volatile)
    if not include_volatile:
        changes = sorted(changes + [c for c in also if c not in changes], key=lambda c: c.path)
    hidden = 0 if include_volatile else len(diff.readings) - len([c for c in also if c in diff.readings])
    # Readings move on their own (facts.yaml): counted as context, listed with --all, never causes.
    note = f" ({hidden} reading(s) hidden, never causes; --all shows them)" if hidden else ""
    if not changes:
        lines.append("no relevant differences" + note)
        return "\n".join(lines) + "\n"
    lines.append(f"{len(changes)} change(s)" + note)
    if diff.not_in_report:
        lines.append(f"{len(diff.not_in_report)} fact(s) not in the report, not compared")
    by_category: dict[str, list[Any]] = {}
    for change in changes:
        by_category.setdefault(change.category, []).append(change)
    order = {category: i for i, category in enumerate(dict.fromkeys(ranked))}
    for category in sorted(by_category, key=lambda c: (order.get(c, len(order)), c)):
        lines.append(f"\n{category}")
        for change in by_category[category]:
            if change.kind == "added":
                lines.append(f"  + {printable(change.path)} = {_describe_change_value(change.after)}")
            elif change.kind == "removed":
                lines.append(f"  - {printable(change.path)} (was {_describe_change_value(change.before)})")
            else:
                lines.append(f"  ~ {printable(change.path)}: {_describe_change_value(change.before)} -> "
                             f"{_describe_change_value(change.after)}")
    return "\n".join(lines) + "\n"
