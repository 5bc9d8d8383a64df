"""Ranking: how likely a cause is, from its rule's prior, its subject's relevance, the size of the
change, the direction the rule expects and the benchmark evidence."""

from __future__ import annotations

from dataclasses import dataclass

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.lookup import number
from driftcheck.analysis.explain.model import MAX_CONFIDENCE, Explanation
from driftcheck.analysis.explain.versions import version_distance
from driftcheck.analysis.rules import Rule

# A change expected to make things faster, weighed without evidence that anything got faster: most
# readers come with a slowdown, which such a change does not explain.
_FASTER_UNCONFIRMED = 0.6
# The benchmarks contradict the rule's direction (it should have sped things up, they slowed down).
_CONTRADICTED = 0.3


@dataclass(frozen=True)
class BenchMoves:
    """What the benchmarks say: the classes of results that got worse and better (None: no evidence)."""

    worse: frozenset[str] | None = None
    better: frozenset[str] = frozenset()


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


def magnitude(change: Change) -> float:
    """How big a change is, for ordering ties: a version step by its level, a number by its relative size."""
    step = version_distance(change.before, change.after)
    if step:
        return step
    before, after = number(change.before), number(change.after)
    if before is None or after is None:
        return 0.5 if change.kind == "changed" else 1.0
    return min(1.0, abs(after - before) / max(abs(before), abs(after), 1e-9))


def consistency(rule: Rule, affects: str, moves: BenchMoves) -> float:
    """How well a rule agrees with its expected direction and the benchmarks (`affects`: what it moves)."""
    if moves.worse is None:
        return _FASTER_UNCONFIRMED if rule.direction == "faster" else 1.0
    if moves.worse:
        if rule.direction == "faster":
            return _CONTRADICTED
        # End-to-end results (decode) move with any layer beneath them: when a specific class fell too (the
        # all-reduce), that class's own cause explains both, and a framework moved alongside is not
        # confirmed by the end-to-end fall (torch and the NCCL it bundles: NCCL by its own evidence).
        if affects == "software" and moves.worse - {"software"}:
            return 0.8
        if affects in moves.worse:
            return 1.6
        return 0.8 if affects == "software" else 0.7
    if moves.better:
        # Nothing got worse but something got faster: the causes are the changes expected to speed it up.
        if rule.direction == "slower":
            return _CONTRADICTED
        return 1.6 if rule.direction == "faster" else 1.0
    # Nothing in the micro-benchmarks moved: the machine is as fast as before; software first.
    if rule.direction == "faster":
        return _FASTER_UNCONFIRMED
    return 1.3 if affects == "software" else 0.6


def confidence(prior: float, rule: Rule, change: Change, affects: str, moves: BenchMoves) -> float:
    """The confidence of a cause, capped below certainty and rounded for display."""
    return round(min(MAX_CONFIDENCE, prior * size(rule, change) * consistency(rule, affects, moves)), 3)


def order_key(explanation: Explanation) -> tuple[float, float, float, str, str]:
    """Most likely first; ties by relevance, then size of change; the category and title only last."""
    return (-explanation.confidence, -explanation.relevance, -explanation.magnitude, explanation.category,
            explanation.title)


def ranked(explanations: list[Explanation]) -> list[Explanation]:
    """Most likely first, numbered from 1."""
    return [e.ranked(i + 1) for i, e in enumerate(sorted(explanations, key=order_key))]
