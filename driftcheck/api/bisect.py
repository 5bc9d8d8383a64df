"""`bisect`: of the changes that make B differ from A, the smallest set that reproduces B's shift."""

from __future__ import annotations

from collections.abc import Sequence

from driftcheck.api.trial import redacting, trial_plan
from driftcheck.probes.redact import Redactor
from driftcheck.runs.bisect import Bisection
from driftcheck.runs.bisect import bisect as bisect_plan
from driftcheck.runs.store import RunStore
from driftcheck.runs.trial import Progress, Variant
from driftcheck.stats import DEFAULT_MAX_PAIRS


def bisect(command: Sequence[str] = (), *, variants: Sequence[Variant], metrics: Sequence[str] = (),
           figure: str | None = None, wall: bool = False, max_pairs: int = DEFAULT_MAX_PAIRS,
           budget_s: float | None = None, alpha: float = 0.05, seed: int | None = None,
           server_command: Sequence[str] | None = None, ready_url: str | None = None, ready_timeout_s: float = 120.0,
           run_timeout_s: float | None = None, label: str | None = None, record: bool = True, resume: bool = False,
           note: Progress | None = None, store: RunStore | None = None) -> Bisection:
    """Delta debugging over B's changes (its environment variables, else, for two interpreters alone, the package
    versions that differ), each step a trial as `trial` runs it (the options as `trial_plan` reads them).
    `budget_s` bounds the whole bisection; `resume` reuses the finished trials an earlier run of the same
    bisection recorded (in `store`, default the user's; `record=False` keeps none). What is returned, noted and
    kept is redacted."""
    plan = trial_plan(command, variants=variants, metrics=metrics, figure=figure, wall=wall, max_pairs=max_pairs,
                      budget_s=budget_s, alpha=alpha, seed=seed, server_command=server_command, ready_url=ready_url,
                      ready_timeout_s=ready_timeout_s, run_timeout_s=run_timeout_s, label=label, record=record)
    store = (store or RunStore()) if record else None
    redactor = store.redactor if store is not None else Redactor.of_user()
    return bisect_plan(plan, note=redacting(note, redactor), store=store, resume=resume).redacted(redactor)
