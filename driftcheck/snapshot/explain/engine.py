"""`explain`: classify every change of a diff by the rule catalog, group, rank, and list what did not change."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from driftcheck.snapshot.diff import Change, SnapshotDiff
from driftcheck.snapshot.explain.bench import bench_evidence, bench_worse
from driftcheck.snapshot.explain.conditions import classify
from driftcheck.snapshot.explain.fixes import Sides, render, template_vars
from driftcheck.snapshot.explain.lookup import lookup, probe_data
from driftcheck.snapshot.explain.model import Explained, Explanation
from driftcheck.snapshot.explain.ranking import confidence, ranked
from driftcheck.snapshot.explain.unchanged import unchanged_suspects
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.rules import Catalog, Rule, default_catalog

Member = tuple[Change, dict[str, str]]


def _boot_changed(diff: SnapshotDiff) -> bool:
    before = lookup(probe_data(diff.a, "system"), ("boot_id",))
    after = lookup(probe_data(diff.b, "system"), ("boot_id",))
    return before is not None and after is not None and before != after


def _revert(rule: Rule, change: Change, captures: dict[str, str]) -> dict[str, Any] | None:
    if rule.revert == "env" and "var" in captures:
        # `value` is A's (None: unset on A), `current` B's: --confirm measures one against the other.
        return {"kind": "env", "name": captures["var"], "value": None if change.kind == "added" else change.before,
                "current": None if change.kind == "removed" else change.after}
    return None


def _group_key(rule: Rule, change: Change, captures: dict[str, str]) -> str:
    others = {k: v for k, v in captures.items() if k != "gpu"}
    return json.dumps([rule.id, others, change.kind, change.before, change.after], sort_keys=True, default=str)


def _groups(diff: SnapshotDiff, catalog: Catalog, include_volatile: bool,
            ignore: Callable[[Change], bool] | None) -> list[tuple[Rule, list[Member]]]:
    """The claimed changes, one group per rule and values (the same power limit on 8 GPUs is one)."""
    groups: dict[str, tuple[Rule, list[Member]]] = {}
    hidden = set() if include_volatile else {id(change) for change in diff.volatile}
    for change in diff.shown(include_volatile=True):
        if ignore is not None and ignore(change):
            continue
        found = classify(diff.a, diff.b, change, catalog)
        if found is None or found[0].ignore:
            continue
        if id(change) in hidden and not found[0].reads_volatile:
            continue
        rule, captures = found
        groups.setdefault(_group_key(rule, change, captures), (rule, []))[1].append((change, captures))
    return list(groups.values())


def _explanation(sides: Sides, rule: Rule, members: list[Member], rebooted: bool,
                 moved: set[str] | None) -> Explanation:
    values = template_vars(sides, members)
    first, captures = members[0]
    title = render(rule.title, values)
    reboot = rule.reboot_reset and rebooted
    if reboot:
        title += " (reset by the reboot: boot id changed)"
    category = first.category if rule.inherit_category and first.category != "other" else rule.category
    return Explanation(rule.id, category, title, tuple(sorted(c.path for c, _ in members)),
                       confidence(rule, first, moved), render(rule.fix, values), reboot,
                       _revert(rule, first, captures))


def explain(diff: SnapshotDiff, catalog: Catalog | None = None, include_volatile: bool = False,
            ignore: Callable[[Change], bool] | None = None) -> Explained:
    """Classify and rank the changes of `diff`; list unchanged suspects and the benchmark evidence.

    `ignore` drops changes the user said may differ (a policy's ignore patterns).
    """
    catalog = catalog or default_catalog()
    result = Explained(diff, rebooted=_boot_changed(diff), include_volatile=include_volatile)
    result.bench, result.bench_note = bench_evidence(diff.a, diff.b)
    moved = {catalog.bench_class(str(row["name"])) for row in result.bench if bench_worse(row)} \
        if result.bench else None
    sides = Sides(diff.a, diff.b)
    causes: list[Explanation] = []
    notes: list[Explanation] = []
    for rule, members in _groups(diff, catalog, include_volatile, ignore):
        explanation = _explanation(sides, rule, members, result.rebooted, moved)
        (notes if rule.not_drift else causes).append(explanation)
    result.explanations = ranked(causes)
    result.notes = sorted(notes, key=lambda e: (-e.confidence, e.category, e.title))
    # Every difference voids the suspects it touches, volatile and policy-ignored ones included: "checked
    # and unchanged" must never claim identical what changed.
    result.unchanged = unchanged_suspects(diff, catalog, diff.shown(include_volatile=True))
    return result


def fix_for(change: Change, reference: Snapshot, current: Snapshot, catalog: Catalog | None = None) \
        -> Explanation | None:
    """The cause and fix of one change measured against any `reference`: the fact at `change.parts` is
    `change.after` on `current` and should be `change.before`, as on `reference`.

    For a fleet, `reference` is a host holding the majority value and `current` the odd one out; for a
    diff it is A and B. None when no rule claims the change or its rule never explains (a volatile reading).
    """
    catalog = catalog or default_catalog()
    found = classify(reference, current, change, catalog)
    if found is None or found[0].ignore:
        return None
    rule, captures = found
    return _explanation(Sides(reference, current), rule, [(change, captures)], False, None)
