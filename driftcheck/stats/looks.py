"""Looking more than once at a growing record: where a check looks, and the level each look is judged at.

A check compares its first runs with the reference and, where a benchmark is undecided, takes more runs and
looks again. Looking twice gives a false alarm two chances, so the looks are planned before the first run
(run counts, e.g. (3, 6)) and each is judged at the check's level divided by the looks planned (Bonferroni):
the chance that an unchanged benchmark is called at either look stays under that level, whether or not the
second look was taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftcheck.errors import UsageError
from driftcheck.stats.comparison import ALPHA_CHECK

# A check takes up to this many times the reference's runs when its first ones cannot decide.
DEFAULT_GROWTH = 2


def default_max_runs(runs: int) -> int:
    """Runs a check may take in all by default: twice the reference's, and never more from a single run
    (one run per side has no spread to project from)."""
    return runs * DEFAULT_GROWTH if runs > 1 else runs


def planned_looks(runs: int, max_runs: int) -> tuple[int, ...]:
    """The run counts at which a check looks: after its `runs`, and after `max_runs` when that is more."""
    if max_runs < runs:
        raise UsageError(f"--max-runs ({max_runs}) is under the runs to take ({runs})")
    return (runs,) if max_runs == runs else (runs, max_runs)


@dataclass(frozen=True)
class Looks:
    """Where a record's B side was looked at: the run counts reached and how many looks were planned."""

    reached: tuple[int, ...]
    planned: int
    family: int = 1

    @property
    def alpha_each(self) -> float:
        """The level of each look (Bonferroni): the number planned sets it, not the number reached, so a
        record that stopped at its first look still spent only its share there. `family`: how many such
        comparisons one question asks at once (a fleet judges each of its hosts), each given its share too."""
        return ALPHA_CHECK / (max(self.planned, 1) * max(self.family, 1))
