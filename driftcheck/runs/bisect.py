"""Which of B's changes cause its shift against A: delta debugging (ddmin, Zeller & Hildebrandt 2002) over
the changes, each test an interleaved trial (`driftcheck.runs.trial`).

The changes are B's environment variables (`--b NAME=VALUE`), or, given two interpreters (`--a-python`,
`--b-python`) and no variables, the package versions that differ between them: a test then runs A's
interpreter with B's installed files of those packages first on its path (`driftcheck.runs.overlay`).

First A is tried against B with every change, which must show a decided shift; then ddmin looks for the
smallest set of changes that, put on A alone, still shows a decided shift in the same direction. A test
that resolves nothing counts as "does not reproduce": a noisy step can only make the set found larger
(ddmin keeps what it could not rule out), never name a change that showed no effect. Each test is its own
trial at the trial's alpha; a bisection of k steps can be wrong at most k·alpha of the time.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from driftcheck.errors import OptionError
from driftcheck.runs.overlay import Overlays, PackageChange, distributions, package_changes
from driftcheck.runs.store import RunStore
from driftcheck.runs.trial import Progress, TrialPlan, TrialResult, Variant, run_trial


@dataclass(frozen=True)
class Change:
    """One environment change of B: a variable set to a value, or unset (value None)."""

    name: str
    value: str | None

    def describe(self) -> str:
        """`NAME=VALUE` or `-NAME`."""
        return f"-{self.name}" if self.value is None else f"{self.name}={self.value}"


AnyChange = Change | PackageChange
Builder = Callable[[Sequence[AnyChange]], Variant]


def changes_of(a: Variant, b: Variant) -> list[Change]:
    """B's environment changes that A does not make already, in B's order."""
    found = [Change(name, value) for name, value in b.set_env.items() if a.set_env.get(name) != value]
    found += [Change(name, None) for name in b.unset_env if name not in a.unset_env]
    return found


def variant_with(a: Variant, changes: Sequence[Change], name: str = "B") -> Variant:
    """A with `changes` put on it."""
    set_env = dict(a.set_env)
    unset = [n for n in a.unset_env if all(c.name != n for c in changes)]
    for change in changes:
        if change.value is None:
            set_env.pop(change.name, None)
            unset.append(change.name)
        else:
            set_env[change.name] = change.value
    return replace(a, name=name, set_env=set_env, unset_env=tuple(unset))


@dataclass
class Step:
    """One test of ddmin: the changes tried, the trial's effect, and whether it reproduced the shift."""

    changes: tuple[AnyChange, ...]
    effect_pct: float
    pairs: int
    p_value: float
    reproduces: bool
    decided: bool

    def to_json(self) -> dict[str, Any]:
        """The step as `bisect --format json` prints it."""
        return {"changes": [c.describe() for c in self.changes], "effect_pct": round(self.effect_pct, 3),
                "pairs": self.pairs, "p_value": self.p_value, "reproduces": self.reproduces,
                "decided": self.decided}


@dataclass
class Bisection:
    """The outcome: the full shift, the smallest reproducing set, and every step taken."""

    changes: list[AnyChange]
    full: Step
    culprits: list[AnyChange]
    steps: list[Step] = field(default_factory=list)
    verdict_word: str = "slower"
    rest: Step | None = None  # the trial of the changes left out, together

    @property
    def culprit_step(self) -> Step | None:
        """The test of the culprits alone (the full trial when every change is needed)."""
        wanted = tuple(self.culprits)
        return next((s for s in reversed(self.steps) if s.changes == wanted), self.full if wanted else None)

    def share_pct(self) -> float | None:
        """How much of the full shift (in log terms) the culprits alone reproduce."""
        step = self.culprit_step
        if step is None or self.full.effect_pct == 0:
            return None
        return math.log1p(step.effect_pct / 100) / math.log1p(self.full.effect_pct / 100) * 100

    def to_json(self) -> dict[str, Any]:
        """The bisection as `bisect --format json` prints it."""
        return {"changes": [c.describe() for c in self.changes], "full": self.full.to_json(),
                "culprits": [c.describe() for c in self.culprits], "share_pct": self.share_pct(),
                "verdict": self.verdict_word, "steps": [s.to_json() for s in self.steps],
                "rest": None if self.rest is None else self.rest.to_json()}


class _Tester:
    """Runs (and remembers) the trial of A against A plus a set of changes."""

    def __init__(self, plan: TrialPlan, build: Builder, note: Progress | None, store: RunStore | None) -> None:
        self.plan, self.build, self.note, self.store, self.direction = plan, build, note, store, 0.0
        self.steps: list[Step] = []
        self.trials = 0
        self._seen: dict[tuple[AnyChange, ...], bool] = {}

    def trial(self, changes: Sequence[AnyChange]) -> tuple[TrialResult, Step]:
        plan = replace(self.plan, variants=(self.plan.variants[0], self.build(changes)))
        result = run_trial(plan, note=None, store=self.store)
        comparison = result.comparisons["B"]
        same_way = self.direction == 0 or comparison.effect_pct * self.direction > 0
        step = Step(tuple(changes), comparison.effect_pct, comparison.n, comparison.p_value,
                    comparison.decided and same_way, comparison.decided)
        self.trials += 1
        if self.note:
            shown = ", ".join(c.describe() for c in changes)
            self.note(f"trial {self.trials}: {shown}: {comparison.effect_pct:+.1f} % in {comparison.n} pairs, "
                      f"p={comparison.p_value:.2g}: {'reproduces' if step.reproduces else 'does not reproduce'}")
        return result, step

    def reproduces(self, changes: Sequence[AnyChange]) -> bool:
        key = tuple(changes)
        if key not in self._seen:
            _, step = self.trial(changes)
            self.steps.append(step)
            self._seen[key] = step.reproduces
        return self._seen[key]


def ddmin(items: Sequence[AnyChange], fails: Callable[[Sequence[AnyChange]], bool]) -> list[AnyChange]:
    """The minimal subset of `items` (known to fail as a whole) that still fails: Zeller's ddmin."""
    current = list(items)
    granularity = 2
    while len(current) >= 2:
        chunks = _split(current, granularity)
        reduced = False
        for chunk in chunks:
            if fails(chunk):
                current, granularity, reduced = chunk, 2, True
                break
        if not reduced:
            for index in range(len(chunks)):
                complement = [c for j, part in enumerate(chunks) if j != index for c in part]
                if len(chunks) > 2 and fails(complement):
                    current, granularity, reduced = complement, max(granularity - 1, 2), True
                    break
        if not reduced:
            if granularity >= len(current):
                break
            granularity = min(len(current), granularity * 2)
    return current


def _split(items: list[AnyChange], parts: int) -> list[list[AnyChange]]:
    size, extra = divmod(len(items), parts)
    chunks, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        chunks.append(items[start:end])
        start = end
    return [c for c in chunks if c]


@contextmanager
def _package_builder(a: Variant, a_python: str, b_python: str,
                     note: Progress | None) -> Iterator[tuple[list[AnyChange], Builder]]:
    """B's package changes that an overlay can put on A, and the builder of A with some of them; the
    overlays' scratch directory is removed on the way out, whatever happens."""
    a_dists, b_dists = distributions(a_python), distributions(b_python)
    every = package_changes(a_dists, b_dists)
    removed = [c for c in every if c.after is None]
    if note and removed:
        note(f"not bisected (removed in B; an overlay cannot take a package away): "
             f"{', '.join(c.describe() for c in removed)}")
    changes: list[AnyChange] = [c for c in every if c.after is not None]
    with tempfile.TemporaryDirectory(prefix="driftcheck-bisect-") as scratch:
        overlays = Overlays(Path(scratch), b_dists)
        inherited = os.environ.get("PYTHONPATH")

        def build(chosen: Sequence[AnyChange]) -> Variant:
            path = str(overlays.path(c for c in chosen if isinstance(c, PackageChange)))
            python_path = path + (os.pathsep + inherited if inherited else "")
            return replace(a, name="B", set_env={**a.set_env, "PYTHONPATH": python_path})

        yield changes, build


def _env_builder(a: Variant, b: Variant) -> tuple[list[AnyChange], Builder]:
    if b.python or b.command is not None or b.server_command is not None:
        raise OptionError("b", None, "bisect goes over environment changes or, with --a-python and --b-python "
                                     "alone, package versions; give B as --b NAME=VALUE / -NAME only")
    return list(changes_of(a, b)), lambda chosen: variant_with(a, [c for c in chosen if isinstance(c, Change)])


def bisect(plan: TrialPlan, note: Progress | None = None, store: RunStore | None = None) -> Bisection:
    """Find the smallest set of B's changes (environment variables, else package versions) that reproduces
    B's shift against A."""
    if len(plan.variants) != 2:
        raise OptionError("c", None, "bisect compares two variants, A and B")
    a, b = plan.variants
    if not (a.python and b.python) or changes_of(a, b):
        changes, build = _env_builder(a, b)
        return _bisect(plan, changes, build, note, store)
    with _package_builder(a, a.python, b.python, note) as (changes, build):
        return _bisect(plan, changes, build, note, store)


def _bisect(plan: TrialPlan, changes: list[AnyChange], build: Builder, note: Progress | None,
            store: RunStore | None) -> Bisection:
    if not changes:
        raise OptionError("b", None, "B makes no change that A does not: nothing to bisect")
    tester = _Tester(plan, build, note, store)
    result, full = tester.trial(changes)
    if not full.reproduces:
        return Bisection(changes, full, [], [], "no difference resolved")
    tester.direction = 1.0 if full.effect_pct > 0 else -1.0
    tester._seen[tuple(changes)] = True
    culprits = ddmin(changes, tester.reproduces) if len(changes) > 1 else changes
    others = [c for c in changes if c not in culprits]
    rest = None
    if others:  # what the changes left out do together: "none" is a measurement, not an assumption
        _, rest = tester.trial(others)
    return Bisection(changes, full, culprits, tester.steps, result.verdict("B"), rest)


def describe(bisection: Bisection) -> list[str]:
    """The outcome in words: what alone reproduces how much of the shift, and what the rest did."""
    full = bisection.full
    if not bisection.culprits:
        return [f"all {len(bisection.changes)} changes together: {full.effect_pct:+.1f} % in {full.pairs} pairs, "
                f"p={full.p_value:.2g}: no difference resolved, nothing to bisect"]
    named = ", ".join(c.describe() for c in bisection.culprits)
    share = bisection.share_pct()
    how_much = f"{share:.0f} % of the shift" if share is not None else "the shift"
    alone = "alone reproduces" if len(bisection.culprits) == 1 else "together reproduce"
    rest = bisection.rest
    others = ""
    if rest is not None:
        what = "a difference" if rest.decided else "no difference resolved"
        others = (f"; the other {len(rest.changes)} change(s) together: {what} ({rest.effect_pct:+.1f} %, "
                  f"{rest.pairs} pairs, p={rest.p_value:.2g})")
    lines = [f"B vs A with all {len(bisection.changes)} changes: {full.effect_pct:+.1f} % ({full.pairs} pairs, "
             f"p={full.p_value:.2g}): B is {bisection.verdict_word}", f"{named} {alone} {how_much}{others}"]
    lines.append(f"{len(bisection.steps) + 1 + (rest is not None)} trials; the ddmin steps:")
    lines.extend(f"  {', '.join(c.describe() for c in s.changes)}: {s.effect_pct:+.1f} % ({s.pairs} pairs, "
                 f"p={s.p_value:.2g}) {'reproduces' if s.reproduces else 'does not'}" for s in bisection.steps)
    return lines
