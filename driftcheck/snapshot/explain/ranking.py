"""Ranking: how likely a cause is, from its rule's prior, the size of the change and the benchmarks."""

from __future__ import annotations

from driftcheck.snapshot.diff import Change
from driftcheck.snapshot.explain.lookup import number
from driftcheck.snapshot.explain.model import MAX_CONFIDENCE, Explanation
from driftcheck.snapshot.rules import Rule


def size(rule: Rule, change: Change) -> float:
    """How much of the prior a change earns by its size: 1 for a fixed-size rule or a non-number."""
    if rule.size == "fixed":
        return 1.0
    before, after = number(change.before), number(change.after)
    if before is None or after is None:
        return 1.0
    scale = max(abs(before), abs(after), 1e-9)
    relative = abs(after - before) / scale
    # A 25 % change counts fully; a 1 % change counts about half.
    return 0.5 + 0.5 * min(1.0, relative * 4)


def consistency(rule: Rule, moved: set[str] | None) -> float:
    """How well a rule agrees with the benchmarks: `moved` is the classes of results that got worse
    (None: no benchmark evidence; empty: nothing moved)."""
    if moved is None:
        return 1.0
    if not moved:
        # Nothing in the micro-benchmarks moved: the machine is as fast as before; software first.
        return 1.3 if rule.affects == "software" else 0.6
    if rule.affects in moved:
        return 1.6
    return 0.8 if rule.affects == "software" else 0.7


def confidence(rule: Rule, change: Change, moved: set[str] | None) -> float:
    """The confidence of a cause, capped below certainty and rounded for display."""
    return round(min(MAX_CONFIDENCE, rule.prior * size(rule, change) * consistency(rule, moved)), 3)


def ranked(explanations: list[Explanation]) -> list[Explanation]:
    """Most likely first, numbered from 1."""
    ordered = sorted(explanations, key=lambda e: (-e.confidence, e.category, e.title))
    return [e.ranked(i + 1) for i, e in enumerate(ordered)]
