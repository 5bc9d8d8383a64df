"""Why performance moved: the structural diff, classified by the rule catalog and ranked.

Each relevant change is claimed by the first rule of `rules.yaml` that matches its path, kind and
conditions. Changes of one rule with the same values (the same power limit on 8 GPUs) become one
explanation. Confidence is the rule's prior × the size of the change × its consistency with the
benchmark evidence, when both snapshots carry calibrated benchmark results. Rules marked `not_drift`
(a PCIe generation that drops at idle, clocks read at idle) become notes, not causes. The usual
suspects that did not change are listed too: that list is what ends a debugging session.

One module per job: `model` (results, `to_json`), `lookup`, `versions`, `conditions` (the `when:` of a
rule, classification), `values` (rendering facts), `fixes` (titles and fixes against any reference),
`ranking`, `bench` (benchmark evidence), `unchanged` (suspects), `report` (the JSON contract),
`engine` (`explain` itself) and `render` (text and markdown).
"""

from __future__ import annotations

from typing import Any

from driftcheck.analysis.explain.bench import bench_evidence, bench_moved, bench_worse
from driftcheck.analysis.explain.conditions import CONDITIONS, classify, condition_names
from driftcheck.analysis.explain.engine import explain, fix_for
from driftcheck.analysis.explain.model import Explained, Explanation
from driftcheck.analysis.explain.values import show_value
from driftcheck.analysis.explain.versions import same_release, version_order


def explain_report(result: Explained, include_volatile: bool | None = None) -> dict[str, Any]:
    """The JSON contract of a result (`result.to_json()`); `include_volatile` overrides the result's own."""
    if include_volatile is not None and include_volatile != result.include_volatile:
        result = Explained(result.diff, result.explanations, result.notes, result.unchanged, result.bench,
                           result.rebooted, result.bench_note, include_volatile)
    return result.to_json()


__all__ = ["CONDITIONS", "Explained", "Explanation", "bench_evidence", "bench_moved", "bench_worse", "classify",
           "condition_names", "explain", "explain_report", "fix_for", "same_release", "show_value",
           "version_order"]
