"""`report`: report.md for a GitHub issue and the signed snapshot beside it, optionally anonymized, with
what changed since another snapshot."""

from __future__ import annotations

from pathlib import Path

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.render import explain_markdown
from driftcheck.api.loading import Side
from driftcheck.api.references import resolve_snapshot
from driftcheck.reports.anonymize import Anonymizer
from driftcheck.reports.report import ReportFiles, prepare, write_report
from driftcheck.snapshot.keys import load_redaction_secret, load_signing_key
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store


def report(snapshot: Side = "@latest", *, against: Side | None = None, output: str | Path | None = None,
           bundle: bool = False, anonymize: bool = False, force: bool = False,
           store: Store | None = None) -> ReportFiles:
    """Write report.md and the snapshot file into `output` (default `driftcheck-report-<id>`), or one
    `<output>.tar.gz` with `bundle`; existing files are replaced only with `force`. `against`: also explain
    what changed since that snapshot. `anonymize` masks host and user names, addresses and home paths (the
    same name, the same token) and signs the masked snapshot again with the user's key."""
    store = store or Store()
    attached_from = _snapshot(snapshot, store)
    reference = _snapshot(against, store) if against is not None else None
    anonymizer = Anonymizer(load_redaction_secret()) if anonymize else None
    attached = prepare(attached_from, anonymizer, load_signing_key() if anonymizer else None)
    changes = None
    if reference is not None:
        before = prepare(reference, anonymizer, None)
        changes = explain_markdown(explain(diff_snapshots(before, attached)))
    out_dir = Path(output) if output is not None else Path(f"driftcheck-report-{attached.short_id}")
    return write_report(attached, out_dir, changes=changes, against=_named(against), bundle=bundle, force=force)


def _snapshot(side: Side, store: Store) -> Snapshot:
    return side if isinstance(side, Snapshot) else resolve_snapshot(side, store)


def _named(side: Side | None) -> str | None:
    """How the report names the reference it explains changes since: as given, or the snapshot's id."""
    if side is None or isinstance(side, str):
        return side
    return side.short_id
