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
from driftcheck.snapshot.patterns import first_match_past


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


def _members(value: Any) -> set[str]:
    return {str(item) for item in _as_list(value)}


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


_LAUNCH_FLAGS = ("probes", "server", "data", "launch", "flags")


def _flag_not_given(ctx: Context) -> bool:
    """Both sides' servers were started with the same flags (both read), and none of them sets the changed
    argument: the engine chose its value on both sides."""
    a, b = lookup(ctx.reference.document, _LAUNCH_FLAGS), lookup(ctx.current.document, _LAUNCH_FLAGS)
    return isinstance(a, dict) and a == b and str(ctx.change.parts[-1]) not in a


Condition = Callable[[Context, Any], bool]
CONDITIONS: dict[str, Condition] = {
    "decreased": lambda ctx, _: (d := _delta(ctx)) is not None and d < 0,
    "increased": lambda ctx, _: (d := _delta(ctx)) is not None and d > 0,
    "abs_delta_ge": lambda ctx, n: (d := _delta(ctx)) is not None and abs(d) >= float(n),
    "abs_delta_lt": lambda ctx, n: (d := _delta(ctx)) is not None and abs(d) < float(n),
    # B's value above a bound: a size lowered but still a size (SGLang's chunked_prefill_size -1 turns chunking
    # off, which is no smaller chunk)
    "after_gt": lambda ctx, n: (v := number(ctx.change.after)) is not None and v > float(n),
    "gpu_idle": lambda ctx, _: _either_idle(ctx),
    "gpu_busy": lambda ctx, _: not _either_idle(ctx),
    "gained": lambda ctx, item: item in _as_list(ctx.change.after) and item not in _as_list(ctx.change.before),
    "lost": lambda ctx, item: item in _as_list(ctx.change.before) and item not in _as_list(ctx.change.after),
    # A list that lost (gained) any member, whichever it is (a mapped plugin's path).
    "lost_any": lambda ctx, _: bool(_members(ctx.change.before) - _members(ctx.change.after)),
    "gained_any": lambda ctx, _: bool(_members(ctx.change.after) - _members(ctx.change.before)),
    "after_is": lambda ctx, value: ctx.change.after == value,
    "before_is": lambda ctx, value: ctx.change.before == value,
    # one of a list of values (the clocksources that read a slow device clock)
    "after_in": lambda ctx, values: ctx.change.after in _as_list(values),
    "before_in": lambda ctx, values: ctx.change.before in _as_list(values),
    "version_up": lambda ctx, _: version_order(ctx.change.before, ctx.change.after) > 0,
    "version_down": lambda ctx, _: version_order(ctx.change.before, ctx.change.after) < 0,
    "same_release": lambda ctx, _: same_release(ctx.change.before, ctx.change.after),
    "same_package_version": lambda ctx, _: _same_dist_version(ctx),
    "other_package_version": lambda ctx, _: not _same_dist_version(ctx),
    "sibling_same": lambda ctx, name: _sibling_same(ctx, str(name)),
    "same_flags_not_given": lambda ctx, _: _flag_not_given(ctx),
    "sibling_changed": lambda ctx, name: not _sibling_same(ctx, str(name)),
}


def fix_is_inert(rule: Rule, reference: Snapshot, current: Snapshot, change: Change) -> bool:
    """Whether the fix of `rule` would change nothing: every fact it restores (`restores`, relative to the
    changed fact's parent) is recorded, and equal, on both sides (the power limit is 140 W on A and B)."""
    if not rule.restores:
        return False
    parent = change.parts[:-1]
    for relative in rule.restores:
        parts = parent + tuple(relative.split("."))
        before, after = lookup(reference.document, parts), lookup(current.document, parts)
        if before is None or before != after:
            return False
    return True


def condition_names() -> list[str]:
    """The names a rule's `when:` may use."""
    return sorted(CONDITIONS)


def _holds(rule: Rule, ctx: Context) -> bool:
    for name, arg in rule.when:
        condition = CONDITIONS.get(name)
        if condition is None or not condition(ctx, arg):
            return False
    return True


# Conditions about one member of a set-valued fact (throttle reasons, modules, flags): a rule that names one
# explains that member, and every such rule is given the change (see `claims`).
_MEMBER_CONDITIONS = frozenset({"gained", "lost"})


def explains_member(rule: Rule) -> bool:
    """Whether `rule` explains one member of a set-valued change (it names a member it gained or lost)."""
    return any(name in _MEMBER_CONDITIONS for name, _ in rule.when)


def claims(reference: Snapshot, current: Snapshot, change: Change, catalog: Catalog) \
        -> list[tuple[Rule, dict[str, str]]]:
    """Every rule that claims `change`, with its captures: the first rule of the catalog, and when that rule
    explains a member of a set (a throttle reason gained), every other rule that explains another member too.

    A set that gained the power cap and the thermal slowdown has two causes; the first rule in file order
    must not hide the second.
    """
    found: list[tuple[Rule, dict[str, str]]] = []
    for rule, patterns in catalog.candidates(change.parts, change.kind):  # those that can match, in catalog order
        if found and not explains_member(rule):
            continue
        captures = first_match_past(patterns, change.parts)
        if captures is not None and _holds(rule, Context(reference, current, change, captures)):
            found.append((rule, captures))
            if not explains_member(rule):
                break
    return found


def classify(reference: Snapshot, current: Snapshot, change: Change, catalog: Catalog) \
        -> tuple[Rule, dict[str, str]] | None:
    """The first rule of the catalog that claims `change`, with its captures."""
    found = claims(reference, current, change, catalog)
    return found[0] if found else None
