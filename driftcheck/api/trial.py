"""`trial` (`driftcheck try`): the user's command under two or more variants, in randomized interleaved rounds,
until the difference is decided, its last planned look, or its time budget."""

from __future__ import annotations

from collections.abc import Sequence

from driftcheck.errors import OptionError
from driftcheck.probes.redact import Redactor
from driftcheck.runs.metrics import pattern_name, user_pattern
from driftcheck.runs.store import RunStore
from driftcheck.runs.trial import (
    WALL,
    Progress,
    ServerSpec,
    TrialPlan,
    TrialResult,
    Variant,
    parse_env_changes,
    run_trial,
)
from driftcheck.stats import DEFAULT_MAX_PAIRS


def variant(name: str, changes: Sequence[str] = (), *, python: str | None = None,
            command: Sequence[str] | None = None, server_command: Sequence[str] | None = None) -> Variant:
    """One side of a trial: `changes` to the environment (`NAME=VALUE` sets, `-NAME` unsets, several per string),
    an interpreter in place of the command's leading python word, or a whole command (or server command) of
    its own. OptionError (naming the variant in lower case) for a change that is neither."""
    set_env, unset = parse_env_changes(name.lower(), changes)
    return Variant(name, set_env, unset, python, None if command is None else tuple(command),
                   None if server_command is None else tuple(server_command))


def trial_plan(command: Sequence[str] = (), *, variants: Sequence[Variant], metrics: Sequence[str] = (),
               figure: str | None = None, wall: bool = False, max_pairs: int = DEFAULT_MAX_PAIRS,
               budget_s: float | None = None, alpha: float = 0.05, seed: int | None = None,
               server_command: Sequence[str] | None = None, ready_url: str | None = None,
               ready_timeout_s: float = 120.0, run_timeout_s: float | None = None, label: str | None = None,
               record: bool = True) -> TrialPlan:
    """What `trial` and `bisect` run, checked before the first run.

    The figure compared is `figure` (a name among those the command prints), else the first of `metrics`
    (`NAME[UNIT]=REGEX`, read as `driftcheck run --metric` reads them), else the first rate printed, else the
    first figure; `wall` compares each run's wall time instead. `server_command` is started before each run with
    the variant's environment and is up once `ready_url` answers (within `ready_timeout_s`). OptionError for an
    `alpha` outside (0, 0.5), fewer than 2 `max_pairs`, or `wall` with a figure named."""
    if not 0 < alpha < 0.5:
        raise OptionError("alpha", f"{alpha:g}", "give a false-positive rate between 0 and 0.5")
    if max_pairs < 2:
        raise OptionError("max_pairs", str(max_pairs), "a trial needs at least 2 rounds")
    if wall and (metrics or figure):
        raise OptionError("wall", None, "wall time is the figure; give no metrics or figure with it")
    patterns = tuple(user_pattern(spec) for spec in metrics)
    metric = WALL if wall else figure or (pattern_name(metrics[0]) if metrics else None)
    server = ServerSpec(tuple(server_command or ()), ready_url, ready_timeout_s) if ready_url else None
    return TrialPlan(command=tuple(command), variants=tuple(variants), patterns=patterns, metric=metric,
                     max_pairs=max_pairs, budget_s=budget_s, alpha=alpha, seed=seed, server=server,
                     run_timeout_s=run_timeout_s, label=label, record=record)


def trial(command: Sequence[str] = (), *, variants: Sequence[Variant], metrics: Sequence[str] = (),
          figure: str | None = None, wall: bool = False, max_pairs: int = DEFAULT_MAX_PAIRS,
          budget_s: float | None = None, alpha: float = 0.05, seed: int | None = None,
          server_command: Sequence[str] | None = None, ready_url: str | None = None, ready_timeout_s: float = 120.0,
          run_timeout_s: float | None = None, label: str | None = None, record: bool = True,
          note: Progress | None = None, store: RunStore | None = None) -> TrialResult:
    """Run `command` as each of `variants` (A first: every other is compared with it) in interleaved rounds and
    say whether each differs from A (the options as `trial_plan` reads them). With `record`, every run is kept
    as a run record (in `store`, default the user's). `note` receives one-line progress. What is returned,
    noted and kept is redacted (a variant's `HF_TOKEN=...` is a digest); what runs is the variant as given."""
    plan = trial_plan(command, variants=variants, metrics=metrics, figure=figure, wall=wall, max_pairs=max_pairs,
                      budget_s=budget_s, alpha=alpha, seed=seed, server_command=server_command, ready_url=ready_url,
                      ready_timeout_s=ready_timeout_s, run_timeout_s=run_timeout_s, label=label, record=record)
    store = (store or RunStore()) if record else None
    redactor = store.redactor if store is not None else Redactor.of_user()
    return run_trial(plan, note=redacting(note, redactor), store=store).redacted(redactor)


def redacting(note: Progress | None, redactor: Redactor) -> Progress | None:
    """`note` receiving every progress line redacted (a line may name a variant's secret value)."""
    if note is None:
        return None
    shown = note
    return lambda line: shown(redactor.text(line))
