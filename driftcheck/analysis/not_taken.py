"""Facts one side took and the other did not: never a change, always counted as not compared.

A probe that ran on one side only (`snapshot --probe env` against a full snapshot), a probe that failed on
one side, or a value one side left unknown (None: torch's runtime facts of a snapshot without `--deep`)
is no evidence of a difference. The diff hands such facts here; they are added to each side's count of
facts not compared (`partial.ComparedSnapshot.only_here`, the `not_compared` member of the report) and to
the paths no "unchanged" claim may cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from driftcheck.analysis.partial import ComparedSnapshot, family
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart


@dataclass
class NotTaken:
    """What each side (0: A, 1: B) holds that the other did not take: fact counts, families and paths."""

    facts: list[int] = field(default_factory=lambda: [0, 0])
    families: list[set[str]] = field(default_factory=lambda: [set(), set()])
    paths: list[list[tuple[PathPart, ...]]] = field(default_factory=lambda: [[], []])

    def add(self, side: int, parts: tuple[PathPart, ...], facts: int) -> None:
        """Record that `side` holds `facts` facts at `parts` the other side did not take."""
        if facts <= 0:
            return
        self.facts[side] += facts
        self.families[side].add(family(parts))
        self.paths[side].append(parts)


def _side(snapshot: Snapshot, not_taken: NotTaken, side: int) -> Snapshot:
    facts, families, paths = not_taken.facts[side], not_taken.families[side], not_taken.paths[side]
    if isinstance(snapshot, ComparedSnapshot):
        return replace(snapshot, only_here=snapshot.only_here + facts,
                       families=tuple(sorted(set(snapshot.families) | families)),
                       left_out=(*snapshot.left_out, *paths))
    return ComparedSnapshot(snapshot.document, snapshot.source, original_id=snapshot.id, only_here=facts,
                            families=tuple(sorted(families)), left_out=tuple(paths))


def with_not_taken(a: Snapshot, b: Snapshot, not_taken: NotTaken) -> tuple[Snapshot, Snapshot]:
    """A and B carrying, in their counts of facts not compared, what the other side did not take; the
    snapshots themselves when both sides took everything the other did."""
    if not (not_taken.paths[0] or not_taken.paths[1]):
        return a, b
    return _side(a, not_taken, 0), _side(b, not_taken, 1)
