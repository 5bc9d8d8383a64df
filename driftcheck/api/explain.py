"""`explain`: the differences between two snapshots ranked by how likely each moved performance, with fixes;
between two runs, their telemetry ranked among them; with `confirm`, the top causes undone and measured."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explained
from driftcheck.analysis.explain import explain as explain_diff
from driftcheck.api.compare import Side, sides
from driftcheck.errors import UsageError
from driftcheck.runs.reference import is_run_reference
from driftcheck.store.snapshots import Store

# Two runs' telemetry and a confirmation are imported by the calls that ask for them (see `explain`): two
# snapshots, the common case, would otherwise pay for the run store, the trial runner and the probes.
if TYPE_CHECKING:
    from driftcheck.analysis.confirm import Confirmation
    from driftcheck.api.confirm import ConfirmRequest
    from driftcheck.api.run_causes import ComparedRuns
    from driftcheck.runs.compare import RunComparison


@dataclass
class ExplainResult(Explained):
    """An Explained (ranked causes, notes, unchanged suspects, who signed each side) with what only
    `explain` adds: the comparison of two runs (`runs`) and the confirmation of the top causes by rank
    (`confirmations`), each None when not asked for."""

    runs: RunComparison | None = None
    confirmations: dict[int, Confirmation] | None = None

    def confirmation_texts(self) -> dict[int, str] | None:
        """Each confirmed cause's sentence by rank, as the text and markdown reports print it."""
        if self.confirmations is None:
            return None
        return {rank: c.text for rank, c in self.confirmations.items()}

    def to_json(self) -> dict[str, Any]:
        """The `explain --format json` object: the explain contract of DESIGN.md, each confirmed cause with
        its `confirm`, and between two runs their comparison (`runs`) and its rows among the `changes`."""
        report = super().to_json()
        if self.confirmations is not None:
            for row in report["explanations"]:
                if row["rank"] in self.confirmations:
                    row["confirm"] = self.confirmations[row["rank"]].to_json()
        if self.runs is not None:
            report["runs"] = self.runs.to_json()
            report["changes"].extend(self.runs.change_rows())
        return report


def explain(a: Side, b: Side, *, all: bool = False, require_trusted: bool = False,  # noqa: A002 - the CLI's --all
            non_spec: str | None = None, confirm: ConfirmRequest | None = None, store: Store | None = None,
            tell: Callable[[str], None] | None = None, note: Callable[[str], None] | None = None) -> ExplainResult:
    """The differences between `a` and `b` (references or Snapshots) ranked by how likely each moved
    performance, with fixes, and who signed each side.

    `all` also weighs volatile facts (timestamps, shell variables). `require_trusted` refuses a side no
    trusted key signed (UntrustedSignerError) before anything is compared. Between two runs (`run:A`,
    `run:B`) their telemetry is ranked among the causes; `non_spec` names the run without speculative
    decoding (`run:ID`) or its throughput in tok/s, for the break-even. `confirm` undoes the top causes
    here and measures its command (`tell` receives the plan and the estimate first, `note` the progress).
    """
    store = store or Store()
    # Two runs: resolved first (and once), so a --non-spec that cannot be used is refused before any work.
    compared = _runs(a, b, non_spec, store)
    if compared is not None:
        a, b = compared.a.snapshot(store), compared.b.snapshot(store)
    first, second, signers = sides(a, b, require_trusted=require_trusted, store=store)
    runs = compared.comparison if compared is not None else None
    explained = explain_diff(diff_snapshots(first, second), include_volatile=all)
    result = ExplainResult(**{f.name: getattr(explained, f.name) for f in fields(Explained)})
    result.signers = signers
    if runs is not None:
        from driftcheck.analysis.run_causes import rank_with_telemetry

        rank_with_telemetry(result, runs)
        result.runs = runs
    if confirm is not None:
        from driftcheck.api.confirm import confirm as confirm_causes

        result.confirmations = confirm_causes(result, second, confirm, tell=tell, note=note)
    return result


def _runs(a: Side, b: Side, non_spec: str | None, store: Store) -> ComparedRuns | None:
    """The comparison of A and B when both are run references; None when not (a `non_spec` then refused)."""
    if isinstance(a, str) and isinstance(b, str) and is_run_reference(a) and is_run_reference(b):
        from driftcheck.api.run_causes import compare_references

        return compare_references(a, b, non_spec, store)
    if non_spec is not None:
        raise UsageError("--non-spec compares runs: use it with explain run:A run:B")
    return None
