"""`diff`: two snapshots named by reference, and every difference between them.

A side is a reference (`@latest`, a file, an id, `baseline:NAME`, `run:ID`) or a Snapshot already in hand;
who signed each side is looked up, and `require_trusted` refuses a side no trusted key signed before anything
is compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from driftcheck.analysis.diff import Change, SnapshotDiff, diff_snapshots
from driftcheck.analysis.explain import Explained, explain
from driftcheck.analysis.signers import Signers, signers_of
from driftcheck.analysis.signers import require_trusted as refuse_untrusted
from driftcheck.api.loading import Side
from driftcheck.api.references import resolve_snapshot
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store


def sides(a: Side, b: Side, *, require_trusted: bool = False,
          store: Store | None = None) -> tuple[Snapshot, Snapshot, Signers]:
    """A and B as snapshots (references resolved in `store`), with who signed each; UntrustedSignerError
    with `require_trusted` when one is not signed by a key the user trusts."""
    store = store or Store()
    first = a if isinstance(a, Snapshot) else resolve_snapshot(a, store)
    second = b if isinstance(b, Snapshot) else resolve_snapshot(b, store)
    signers = signers_of(first, second)
    if require_trusted:
        refuse_untrusted(signers)
    return first, second, signers


@dataclass
class DiffResult:
    """What `diff` found: every difference (`diff`), the same ranked as `explain` ranks them (`explained`),
    who signed each side (`signers`), and whether anything relevant differs (`drifted`)."""

    diff: SnapshotDiff
    explained: Explained
    signers: Signers

    @property
    def changes(self) -> list[Change]:
        """The differences that are not readings (values that move on their own)."""
        return self.diff.changes

    @property
    def drifted(self) -> bool:
        """Whether anything differs that is not a reading, or a cause is ranked (a rule weighing a reading)."""
        return bool(self.diff.changes or self.explained.explanations)

    def shown_readings(self) -> list[Change]:
        """The readings a plain diff hides that a ranked cause or a note rests on (a clock under load)."""
        evidence = self.explained.evidence_paths()
        return [c for c in self.diff.readings if c.path in evidence]

    def to_json(self) -> dict[str, Any]:
        """The `diff --format json` object: the explain contract of DESIGN.md, and the facts a pasted report
        could not hold (`not_in_report`) when one side is such a report."""
        report = self.explained.to_json()
        if self.diff.not_in_report:
            report["not_in_report"] = self.diff.not_in_report
        return report


def diff(a: Side, b: Side, *, all: bool = False, require_trusted: bool = False,  # noqa: A002 - the CLI's --all
         store: Store | None = None) -> DiffResult:
    """Every difference between snapshots `a` and `b` (references or Snapshots), each with its category;
    `all` also weighs the readings (clocks, free memory, the taking) and lists them."""
    first, second, signers = sides(a, b, require_trusted=require_trusted, store=store)
    found = diff_snapshots(first, second)
    explained = explain(found, include_volatile=all)
    explained.signers = signers
    return DiffResult(found, explained, signers)
