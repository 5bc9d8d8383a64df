"""The conditions a rule's `when:` may name, and classification: which rule claims a change.

A condition sees both sides: `reference` (what the fact should be; A of a diff, or a fleet's majority
host) and `current` (B).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.lookup import dist_of, gpu_idle, lookup, number, package_version
from driftcheck.analysis.explain.versions import same_release, version_order
from driftcheck.analysis.rules import Catalog, Rule
from driftcheck.snapshot.model import Snapshot


@dataclass(frozen=True)
class Context:
    """What a condition sees: the two snapshots, the change and the rule's captures."""

    reference: Snapshot
    current: Snapshot
    change: Change
    captures: dict[str, str]


def _delta(ctx: Context) -> float | None:
    before, after = number(ctx.change.before), number(ctx.change.after)
    return None if before is None or after is None else after - before


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _either_idle(ctx: Context) -> bool:
    key = ctx.captures.get("gpu")
    return key is not None and (gpu_idle(ctx.reference, key) or gpu_idle(ctx.current, key))


def _same_dist_version(ctx: Context) -> bool:
    dist, _ = dist_of(ctx.captures.get("file", ""))
    before = package_version(ctx.reference, dist)
    return before is not None and before == package_version(ctx.current, dist)


def _sibling_same(ctx: Context, name: str) -> bool:
    parts = ctx.change.parts[:-1] + (name,)
    a, b = lookup(ctx.reference.document, parts), lookup(ctx.current.document, parts)
    return a is not None and a == b


Condition = Callable[[Context, Any], bool]
CONDITIONS: dict[str, Condition] = {
    "decreased": lambda ctx, _: (d := _delta(ctx)) is not None and d < 0,
    "increased": lambda ctx, _: (d := _delta(ctx)) is not None and d > 0,
    "abs_delta_ge": lambda ctx, n: (d := _delta(ctx)) is not None and abs(d) >= float(n),
    "abs_delta_lt": lambda ctx, n: (d := _delta(ctx)) is not None and abs(d) < float(n),
    "gpu_idle": lambda ctx, _: _either_idle(ctx),
    "gpu_busy": lambda ctx, _: not _either_idle(ctx),
    "gained": lambda ctx, item: item in _as_list(ctx.change.after) and item not in _as_list(ctx.change.before),
    "lost": lambda ctx, item: item in _as_list(ctx.change.before) and item not in _as_list(ctx.change.after),
    "after_is": lambda ctx, value: ctx.change.after == value,
    "before_is": lambda ctx, value: ctx.change.before == value,
    "version_up": lambda ctx, _: version_order(ctx.change.before, ctx.change.after) > 0,
    "version_down": lambda ctx, _: version_order(ctx.change.before, ctx.change.after) < 0,
    "same_release": lambda ctx, _: same_release(ctx.change.before, ctx.change.after),
    "same_package_version": lambda ctx, _: _same_dist_version(ctx),
    "other_package_version": lambda ctx, _: not _same_dist_version(ctx),
    "sibling_same": lambda ctx, name: _sibling_same(ctx, str(name)),
    "sibling_changed": lambda ctx, name: not _sibling_same(ctx, str(name)),
}


def condition_names() -> list[str]:
    """The names a rule's `when:` may use."""
    return sorted(CONDITIONS)


def _holds(rule: Rule, ctx: Context) -> bool:
    for name, arg in rule.when:
        condition = CONDITIONS.get(name)
        if condition is None or not condition(ctx, arg):
            return False
    return True


def classify(reference: Snapshot, current: Snapshot, change: Change, catalog: Catalog) \
        -> tuple[Rule, dict[str, str]] | None:
    """The first rule of the catalog that claims `change`, with its captures."""
    for rule in catalog.rules:
        captures = rule.match(change.parts, change.kind)
        if captures is not None and _holds(rule, Context(reference, current, change, captures)):
            return rule, captures
    return None
