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

`budget_s` bounds the whole bisection: each trial gets what is left, and one cut short by it ends the
bisection unfinished. Every run is a run record tagged with the bisection's id (a hash of the command, A, B
and the trial options) and the changes its trial tried, so a bisection stopped by its budget or by Ctrl-C
can be resumed (`resume=True`): each trial whose records show it finished (decided at a planned look, or
run to its last) is decided again from those figures by the same rule instead of being rerun; a trial
cut off is run afresh.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from driftcheck.errors import OptionError
from driftcheck.probes.redact import Redactor
from driftcheck.runs.overlay import Overlays, PackageChange, distributions, package_changes
from driftcheck.runs.shapes import BisectionJson, StepJson, TrialTags
from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.runs.trial import Progress, TrialPlan, TrialResult, Variant, recorded_result, run_trial


@dataclass(frozen=True)
class Change:
    """One environment change of B: a variable set to a value, or unset (value None)."""

    name: str
    value: str | None

    def describe(self) -> str:
        """`NAME=VALUE` or `-NAME`."""
        return f"-{self.name}" if self.value is None else f"{self.name}={self.value}"

    def redacted(self, redactor: Redactor) -> Change:
        """The change as it is shown and kept: a secret value digested."""
        return self if self.value is None else Change(self.name, redactor.environ({self.name: self.value})[self.name])


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
    reused: bool = False  # decided again from the run records of an earlier, interrupted bisection
    run_ids: tuple[int, ...] = ()

    def redacted(self, redactor: Redactor) -> Step:
        """The step as it is shown: its changes redacted."""
        return replace(self, changes=tuple(_redacted(c, redactor) for c in self.changes))

    def to_json(self) -> StepJson:
        """The step as `bisect --format json` prints it."""
        return {"changes": [c.describe() for c in self.changes], "effect_pct": round(self.effect_pct, 3),
                "pairs": self.pairs, "p_value": self.p_value, "reproduces": self.reproduces,
                "decided": self.decided, "reused": self.reused, "run_ids": list(self.run_ids)}


@dataclass
class Bisection:
    """The outcome: the full shift, the smallest reproducing set, and every step taken."""

    changes: list[AnyChange]
    full: Step | None  # None: the budget ran out before the first trial ended
    culprits: list[AnyChange]
    steps: list[Step] = field(default_factory=list)
    verdict_word: str = "slower"
    rest: Step | None = None  # the trial of the changes left out, together
    finished: bool = True  # False: stopped by the budget; `resume` goes on from the trials recorded
    bisection_id: str = ""
    reused: int = 0  # trials decided again from earlier records instead of being rerun

    @property
    def culprit_step(self) -> Step | None:
        """The test of the culprits alone (the full trial when every change is needed)."""
        wanted = tuple(self.culprits)
        return next((s for s in reversed(self.steps) if s.changes == wanted), self.full if wanted else None)

    def share_pct(self) -> float | None:
        """How much of the full shift (in log terms) the culprits alone reproduce."""
        step = self.culprit_step
        if step is None or self.full is None or self.full.effect_pct == 0:
            return None
        return math.log1p(step.effect_pct / 100) / math.log1p(self.full.effect_pct / 100) * 100

    def redacted(self, redactor: Redactor) -> Bisection:
        """The bisection as it is shown: every change of it redacted."""
        return replace(self, changes=[_redacted(c, redactor) for c in self.changes],
                       culprits=[_redacted(c, redactor) for c in self.culprits],
                       full=None if self.full is None else self.full.redacted(redactor),
                       steps=[s.redacted(redactor) for s in self.steps],
                       rest=None if self.rest is None else self.rest.redacted(redactor))

    def to_json(self) -> BisectionJson:
        """The bisection as `bisect --format json` prints it."""
        return {"id": self.bisection_id, "finished": self.finished, "reused": self.reused,
                "changes": [c.describe() for c in self.changes],
                "full": None if self.full is None else self.full.to_json(),
                "culprits": [c.describe() for c in self.culprits], "share_pct": self.share_pct(),
                "verdict": self.verdict_word, "steps": [s.to_json() for s in self.steps],
                "rest": None if self.rest is None else self.rest.to_json()}


def _redacted(change: AnyChange, redactor: Redactor) -> AnyChange:
    """An environment change redacted; a package version change is no secret."""
    return change.redacted(redactor) if isinstance(change, Change) else change


class _BudgetSpent(Exception):
    """The bisection's budget ran out before a trial could finish."""


def bisection_id(plan: TrialPlan) -> str:
    """What identifies one bisection across interruptions: the command, A and B, and the trial options."""
    a, b = plan.variants
    key = {"command": list(plan.command), "a": a.to_json(), "b": b.to_json(), "metric": plan.metric,
           "patterns": [p.source for p in plan.patterns], "max_pairs": plan.max_pairs, "alpha": plan.alpha,
           "server": None if plan.server is None else [list(plan.server.command), plan.server.ready_url]}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _label(plan: TrialPlan, ident: str) -> str:
    return plan.label or f"bisect-{ident}"


def recorded_trials(store: RunStore, plan: TrialPlan, ident: str) -> dict[tuple[str, ...], TrialResult]:
    """The finished trials an earlier run of this bisection left in `store`, by the changes they tried (the
    latest when one was tried twice)."""
    label = _label(plan, ident)
    groups: dict[tuple[str, tuple[str, ...]], list[RunRecord]] = {}
    for name in ("A", "B"):
        for record in store.entries(label=f"try:{label}:{name}"):
            trial = record.telemetry.get("trial", {})
            if trial.get("bisect") == ident and isinstance(trial.get("changes"), list):
                groups.setdefault((str(trial.get("attempt")), tuple(trial["changes"])), []).append(record)
    found: dict[tuple[str, ...], tuple[int, TrialResult]] = {}
    for (_, changes), records in groups.items():
        result = recorded_result(plan, sorted(records, key=lambda r: r.id or 0))
        latest = max(r.id or 0 for r in records)
        if result is not None and latest > found.get(changes, (-1, result))[0]:
            found[changes] = (latest, result)
    return {changes: result for changes, (_, result) in found.items()}


class _Tester:
    """Runs (and remembers) the trial of A against A plus a set of changes; reuses a finished recorded one."""

    def __init__(self, plan: TrialPlan, build: Builder, note: Progress | None, store: RunStore | None,
                 ident: str, recorded: dict[tuple[str, ...], TrialResult]) -> None:
        self.plan, self.build, self.note, self.store, self.direction = plan, build, note, store, 0.0
        self.ident, self.recorded = ident, recorded
        self.steps: list[Step] = []
        self.trials = 0
        self.reused = 0
        self.deadline = None if plan.budget_s is None else time.monotonic() + plan.budget_s
        self._seen: dict[tuple[AnyChange, ...], bool] = {}

    def trial(self, changes: Sequence[AnyChange]) -> tuple[TrialResult, Step]:
        described = tuple(c.describe() for c in changes)
        # The store keeps the changes redacted: an earlier run's trial is found by the same redaction.
        result = self.recorded.get(tuple(self.store.redactor.text(d) for d in described) if self.store else described)
        reused = result is not None
        if result is None:
            result = self._run(changes, described)
        comparison = result.comparisons["B"]
        same_way = self.direction == 0 or comparison.effect_pct * self.direction > 0
        run_ids = tuple(sorted(r.run_id for r in result.runs if r.run_id is not None))
        step = Step(tuple(changes), comparison.effect_pct, comparison.n, comparison.p_value,
                    comparison.decided and same_way, comparison.decided, reused, run_ids)
        self.trials += 1
        self.reused += reused
        if self.note:
            where = f" (reused: runs #{run_ids[0]}-#{run_ids[-1]} of an earlier run)" if reused and run_ids else ""
            self.note(f"trial {self.trials}: {', '.join(described)}: {comparison.effect_pct:+.1f} % in "
                      f"{comparison.n} pairs, p={comparison.p_value:.2g}: "
                      f"{'reproduces' if step.reproduces else 'does not reproduce'}{where}")
        return result, step

    def _run(self, changes: Sequence[AnyChange], described: tuple[str, ...]) -> TrialResult:
        budget = None
        if self.deadline is not None:
            budget = self.deadline - time.monotonic()
            if budget <= 0:
                raise _BudgetSpent()
        # `attempt` tells apart two tries of the same changes (one cut off, one rerun), whatever their seeds.
        tags: TrialTags = {"bisect": self.ident, "changes": list(described), "attempt": uuid.uuid4().hex[:12]}
        plan = replace(self.plan, variants=(self.plan.variants[0], self.build(changes)), budget_s=budget,
                       label=_label(self.plan, self.ident), tags={**self.plan.tags, **tags})
        result = run_trial(plan, note=None, store=self.store)
        if result.stopped == "budget":
            raise _BudgetSpent()
        return result

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


def bisect(plan: TrialPlan, note: Progress | None = None, store: RunStore | None = None,
           resume: bool = False) -> Bisection:
    """Find the smallest set of B's changes (environment variables, else package versions) that reproduces
    B's shift against A. `plan.budget_s` bounds the whole bisection; `resume` reuses the finished trials an
    earlier, interrupted run of the same bisection recorded in `store`."""
    if len(plan.variants) != 2:
        raise OptionError("c", None, "bisect compares two variants, A and B")
    if resume and store is None:
        raise OptionError("resume", None, "resuming reads the run records of the earlier bisection; leave out "
                                          "--no-record")
    a, b = plan.variants
    ident = bisection_id(plan)
    recorded = recorded_trials(store, plan, ident) if resume and store is not None else {}
    if note and resume:
        note(f"bisection {ident}: {len(recorded)} finished trial(s) recorded by an earlier run, reused")
    if not (a.python and b.python) or changes_of(a, b):
        changes, build = _env_builder(a, b)
        return _bisect(plan, changes, _Tester(plan, build, note, store, ident, recorded))
    with _package_builder(a, a.python, b.python, note) as (changes, build):
        return _bisect(plan, changes, _Tester(plan, build, note, store, ident, recorded))


def _bisect(plan: TrialPlan, changes: list[AnyChange], tester: _Tester) -> Bisection:
    if not changes:
        raise OptionError("b", None, "B makes no change that A does not: nothing to bisect")
    full: Step | None = None
    try:
        result, full = tester.trial(changes)
        if not full.reproduces:
            return Bisection(changes, full, [], [], "no difference resolved", bisection_id=tester.ident,
                             reused=tester.reused)
        tester.direction = 1.0 if full.effect_pct > 0 else -1.0
        tester._seen[tuple(changes)] = True
        culprits = ddmin(changes, tester.reproduces) if len(changes) > 1 else changes
        others = [c for c in changes if c not in culprits]
        rest = None
        if others:  # what the changes left out do together: "none" is a measurement, not an assumption
            _, rest = tester.trial(others)
    except _BudgetSpent:
        return Bisection(changes, full, [], tester.steps, "unfinished", finished=False, bisection_id=tester.ident,
                         reused=tester.reused)
    return Bisection(changes, full, culprits, tester.steps, result.verdict("B"), rest, bisection_id=tester.ident,
                     reused=tester.reused)
