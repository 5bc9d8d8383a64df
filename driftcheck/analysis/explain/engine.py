"""`explain`: classify every change of a diff by the rule catalog, group, merge by root, rank, and
list what did not change."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from driftcheck.analysis.diff import Change, SnapshotDiff
from driftcheck.analysis.explain.bench import bench_better, bench_evidence, bench_moved
from driftcheck.analysis.explain.conditions import claims, classify, explains_member, fix_is_inert
from driftcheck.analysis.explain.fixes import Sides, fix_kind, render, render_fix, template_vars
from driftcheck.analysis.explain.interpreter import one_interpreter_cause
from driftcheck.analysis.explain.lookup import lookup, probe_data
from driftcheck.analysis.explain.machine import NO_GPU_WHY, machine_weight
from driftcheck.analysis.explain.model import Explained, Explanation
from driftcheck.analysis.explain.ranking import BenchMoves, confidence, magnitude, order_key, ranked
from driftcheck.analysis.explain.release_family import named_releases, release_roots
from driftcheck.analysis.explain.relevance import Relevance, RelevanceTable, relevance_table
from driftcheck.analysis.explain.roots import root_of
from driftcheck.analysis.explain.unchanged import unchanged_suspects
from driftcheck.analysis.explain.values import field_for, human_field
from driftcheck.analysis.rules import Catalog, Rule, default_catalog
from driftcheck.snapshot.bulk import without_gc
from driftcheck.snapshot.facts import fact_table, is_reading
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import parse_path

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


# Captures that only say where one change was seen (which GPU, which GPU pair): the same change seen at
# several of them is one cause (one power limit on 8 GPUs, one topology change across every GPU pair).
_WHERE_CAPTURES = ("gpu", "pair")


def _group_key(rule: Rule, change: Change, captures: dict[str, str]) -> str:
    if rule.merge:
        return json.dumps([rule.id])
    others = {k: v for k, v in captures.items() if k not in _WHERE_CAPTURES}
    return json.dumps([rule.id, others, change.kind, change.before, change.after], sort_keys=True, default=str)


def _groups(diff: SnapshotDiff, catalog: Catalog,
            ignore: Callable[[Change], bool] | None) -> list[tuple[Rule, list[Member], bool, bool]]:
    """The claimed changes, one group per rule and values (the same power limit on 8 GPUs is one), each
    with whether the rule's fix would change nothing (its `restores` facts are equal on both sides) and
    whether it rests on readings alone.

    A change of a set (throttle reasons) is given to every rule that explains one of its members."""
    groups: dict[tuple[bool, bool, str], tuple[Rule, list[Member], bool, bool]] = {}
    for change in diff.shown(include_readings=True):
        if ignore is not None and ignore(change):
            continue
        for rule, captures in claims(diff.a, diff.b, change, catalog):
            # A reading is never a cause, `--all` or not: only a rule that interprets readings weighs one,
            # and then as context (a note), never ranked.
            if rule.ignore or (change.reading and not rule.reads_volatile):
                continue
            inert = fix_is_inert(rule, diff.a, diff.b, change)
            # A tuple, not the JSON text of one: equal exactly when that text would be, one encoding fewer.
            key = (inert, change.reading, _group_key(rule, change, captures))
            groups.setdefault(key, (rule, [], inert, change.reading))[1].append((change, captures))
    return list(groups.values())


def _observed(explanation: Explanation) -> Explanation:
    """A rule's reading of values that move on their own, said so: context for a cause, never ranked."""
    return replace(explanation, title=f"{explanation.title} (readings: context, never a cause)")


def _inert(explanation: Explanation, rule: Rule) -> Explanation:
    """A cause whose fix would change nothing, said so: it is shown as a note, never ranked."""
    same = " and ".join(dict.fromkeys(human_field(path) for path in rule.restores))
    return replace(explanation, title=f"{explanation.title} ({same} the same on A and B: its fix would change nothing)")


def _subject(root: str | None, sides: Sides, table: RelevanceTable) -> Relevance | None:
    """How much the package or library a cause is about matters; None when it is about neither."""
    if root is None:
        return None
    kind, _, name = root.partition(":")
    if kind == "library":
        return table.of_library(name)
    if kind == "package":
        return table.of(name, (sides.current, sides.reference))
    return None


def _explanation(sides: Sides, rule: Rule, members: list[Member], rebooted: bool, moves: BenchMoves,
                 table: RelevanceTable) -> Explanation:
    first, captures = members[0]
    root = root_of(rule, first, table)
    if root is None and explains_member(rule):
        # Members of one set change with one kind of cause (hardware and software thermal slowdown) are one.
        root = f"members:{rule.category}:{first.path}"
    subject = _subject(root, sides, table)
    values = template_vars(sides, members, table, rule.title + rule.fix)
    values["field"] = field_for(values["field"], rule.title)
    title = " ".join(render(rule.title, values).split())
    reboot = rule.reboot_reset and rebooted
    if reboot:
        title += " (reset by the reboot: boot id changed)"
    category = first.category if rule.inherit_category and first.category != "other" else rule.category
    weight = machine_weight(rule, captures, sides.reference, sides.current)
    prior = rule.prior * (subject.prior if subject else 1.0) * weight
    affects = subject.affects if subject and subject.affects else rule.affects
    fix = render_fix(rule.fix, values)
    why = NO_GPU_WHY if weight < 1.0 else (subject.why if subject else "")
    return Explanation(rule.id, category, title, tuple(sorted(c.path for c, _ in members)),
                       confidence(prior, rule, first, affects, moves), fix, reboot,
                       _revert(rule, first, captures), why=why, relevance=prior,
                       magnitude=max(magnitude(change) for change, _ in members), root=root,
                       fix_kind=fix_kind(fix))


def _primacy(explanation: Explanation) -> tuple[int, float]:
    """Which cause of one root speaks for it: the one whose evidence stands first in the facts table's
    primacy (a package's version, then what a person sets), then the most confident."""
    table = fact_table()
    return min(table.primacy(parse_path(path)) for path in explanation.evidence), -explanation.confidence


def merged_by_root(explanations: list[Explanation]) -> list[Explanation]:
    """One explanation per underlying change: causes of one root become the primary cause, with every
    evidence path and the highest confidence of them."""
    by_root: dict[str, list[Explanation]] = {}
    out: list[Explanation] = []
    for explanation in explanations:
        if explanation.root is None:
            out.append(explanation)
        else:
            by_root.setdefault(explanation.root, []).append(explanation)
    for members in by_root.values():
        # A root of one cause (each variable of a large diff is its own) needs no choosing.
        primary = members[0] if len(members) == 1 else min(members, key=_primacy)
        top = members[0] if len(members) == 1 else min(members, key=order_key)
        out.append(replace(primary,
                           evidence=tuple(sorted({path for e in members for path in e.evidence})),
                           confidence=top.confidence, relevance=max(e.relevance for e in members),
                           magnitude=max(e.magnitude for e in members),
                           reboot_reset=any(e.reboot_reset for e in members),
                           revert=primary.revert or next((e.revert for e in members if e.revert), None),
                           merged=tuple(sorted({e.rule for e in members} - {primary.rule}))))
    return out


def _reboot_context(causes: list[Explanation], catalog: Catalog) -> tuple[list[Explanation], list[Explanation]]:
    """(causes, context): a reboot notice is the context of the facts the reboot reset (a huge-page pool,
    persistence mode), not a rival cause; when one of them changed the notice leaves the ranking."""
    context_rules = {rule.id for rule in catalog.rules if rule.context}
    if not any(cause.reboot_reset for cause in causes):
        return causes, []
    return ([cause for cause in causes if cause.rule not in context_rules],
            [cause for cause in causes if cause.rule in context_rules])


def _bench_moves(result: Explained, catalog: Catalog) -> BenchMoves:
    # Only conclusive verdicts are evidence: all inconclusive is "no benchmark evidence", not "nothing moved".
    worse = bench_moved(result.bench, catalog.bench_class)
    if worse is None:
        return BenchMoves()
    return BenchMoves(frozenset(worse),
                      frozenset(catalog.bench_class(str(row["name"])) for row in result.bench if bench_better(row)))


@without_gc
def explain(diff: SnapshotDiff, catalog: Catalog | None = None, include_volatile: bool = False,
            ignore: Callable[[Change], bool] | None = None) -> Explained:
    """Classify and rank the changes of `diff`; list unchanged suspects and the benchmark evidence.

    `ignore` drops changes the user said may differ (a policy's ignore patterns).
    """
    catalog = catalog or default_catalog()
    table = relevance_table()
    result = Explained(diff, rebooted=_boot_changed(diff), include_volatile=include_volatile)
    result.bench, result.bench_note = bench_evidence(diff.a, diff.b)
    moves = _bench_moves(result, catalog)
    sides = Sides(diff.a, diff.b, diff.whole)
    causes: list[Explanation] = []
    notes: list[Explanation] = []
    observed: list[Explanation] = []
    for rule, members, inert, readings in _groups(diff, catalog, ignore):
        explanation = _explanation(sides, rule, members, result.rebooted, moves, table)
        if inert:
            notes.append(_inert(explanation, rule))
        elif readings and not rule.not_drift:
            observed.append(_observed(explanation))
        else:
            (notes if rule.not_drift else causes).append(explanation)
    causes, context = _reboot_context(one_interpreter_cause(causes, diff), catalog)
    result.explanations = ranked(named_releases(merged_by_root(release_roots(causes, sides))))
    # Readings of one root (the error counters of one port) are one observation, as they would be one cause.
    notes += context + merged_by_root(observed)
    result.notes = sorted(notes, key=order_key)
    # Every difference voids the suspects it touches, volatile and policy-ignored ones included: "checked
    # and unchanged" must never claim identical what changed.
    result.unchanged = unchanged_suspects(diff, catalog, diff.shown(include_readings=True))
    return result


def fix_for(change: Change, reference: Snapshot, current: Snapshot, catalog: Catalog | None = None) \
        -> Explanation | None:
    """The cause and fix of one change measured against any `reference`: the fact at `change.parts` is
    `change.after` on `current` and should be `change.before`, as on `reference`.

    For a fleet, `reference` is a host holding the majority value and `current` the odd one out; for a
    diff it is A and B. None when no rule claims the change, its rule never explains, or it is a reading
    (whatever rule names it).
    """
    catalog = catalog or default_catalog()
    found = classify(reference, current, change, catalog)
    if found is None or found[0].ignore:
        return None
    if change.reading or is_reading(change.parts):
        return None  # a reading moves on its own (facts.yaml): never a cause, on a fleet either
    rule, captures = found
    return _explanation(Sides(reference, current), rule, [(change, captures)], False, BenchMoves(),
                        relevance_table())
