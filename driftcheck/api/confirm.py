"""`explain --confirm -- CMD` run for real: the scratch environments built, the trials run, each verdict
judged by `analysis.confirm` (which also makes the plan this module carries out).

`ConfirmRequest` is what the caller asks (the command, how many causes, the interpreters, the server, the
figure, the trial's bounds), in plain values; `confirm` plans, says the plan, runs the trials and returns
each cause's Confirmation by rank.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from driftcheck.analysis.confirm import (
    DEFAULT_TOP,
    Confirmation,
    ConfirmPlan,
    ConfirmSetup,
    FactValue,
    Undo,
    confirm_plan,
    not_confirmable,
    verdict_of,
    with_flag,
)
from driftcheck.analysis.explain.model import Explained
from driftcheck.api._shared import frozen_tuple
from driftcheck.api.trial_options import DEFAULT_READY_TIMEOUT_S, check_trial_options
from driftcheck.errors import DriftcheckError, OptionError, UsageError
from driftcheck.runs.metrics import pattern_name, user_pattern
from driftcheck.runs.overlay import Distribution, distributions
from driftcheck.runs.scratch_env import NotBuildable, ScratchEnvs
from driftcheck.runs.store import RunStore
from driftcheck.runs.system_knob import KNOBS, guard, wrapper
from driftcheck.runs.trial import (
    WALL,
    ServerSpec,
    TrialError,
    TrialPlan,
    Variant,
    run_trial,
    running_server,
    stop_tree,
    terminations_raise,
)
from driftcheck.snapshot.model import Snapshot
from driftcheck.stats import DEFAULT_MAX_PAIRS


@dataclass(frozen=True)
class ConfirmRequest:
    """What `explain(..., confirm=...)` runs: `command`, the user's benchmark (its first word `python` is
    replaced by B's interpreter), for each of the `top` ranked causes.

    `a_python`: A's interpreter on this machine (A's package files are copied from it, and A runs too so the
    share of the shift is measured); `b_python`: B's (default: the command's own python). `server_command`
    (with `ready`, the URL that answers once it is up): B's server, started for each run. `metrics`:
    `NAME[UNIT]=REGEX` patterns read from the output, `figure` the one compared, `wall` compares wall time
    instead. `max_pairs`, `budget_s`, `seed`, `run_timeout_s` bound each trial; `record=False` keeps no run
    records. `allow_system_changes` lets a root-only knob driftcheck can put back (transparent huge pages)
    be set for each run.
    """

    command: Sequence[str]
    top: int = DEFAULT_TOP
    a_python: str | None = None
    b_python: str | None = None
    server_command: Sequence[str] | None = None
    ready: str | None = None
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S
    metrics: Sequence[str] = ()
    figure: str | None = None
    wall: bool = False
    max_pairs: int = DEFAULT_MAX_PAIRS
    budget_s: float | None = None
    seed: int | None = None
    run_timeout_s: float | None = None
    record: bool = True
    allow_system_changes: bool = False

    def __post_init__(self) -> None:
        for name in ("command", "server_command", "metrics"):
            frozen_tuple(self, name)
        if not self.command:
            raise UsageError("--confirm needs your benchmark command after --, e.g. "
                             "driftcheck explain A B --confirm -- python bench.py")
        check_trial_options(bool(self.server_command), bool(self.ready), self.wall,
                            bool(self.metrics or self.figure), self.max_pairs)
        if self.top < 1:
            raise OptionError("top", str(self.top), "must be at least 1")

    def setup(self) -> ConfirmSetup:
        """The trial settings and interpreters the plan is made of."""
        patterns = tuple(user_pattern(spec) for spec in self.metrics)
        metric = WALL if self.wall else self.figure or (patterns and pattern_name(self.metrics[0])) or None
        server = (ServerSpec(tuple(self.server_command), self.ready, self.ready_timeout_s)
                  if self.server_command and self.ready else None)
        trial = TrialPlan(command=tuple(self.command), variants=(), patterns=patterns, metric=metric,
                          max_pairs=self.max_pairs, budget_s=self.budget_s, seed=self.seed, server=server,
                          run_timeout_s=self.run_timeout_s, label="confirm", record=self.record)
        return ConfirmSetup(trial, self.a_python, self.b_python, self.allow_system_changes)


def plan(result: Explained, b: Snapshot, request: ConfirmRequest) -> ConfirmPlan:
    """The plan for `result`'s top causes on this machine: which interpreter the command runs, which
    machine-wide settings this user may write."""
    setup = request.setup()
    command_python = None if setup.b_python else _python_of_command(setup.trial.command)
    writable = [path for path in KNOBS.values() if os.access(path, os.W_OK)]
    return confirm_plan(result, b, setup, top=request.top, command_python=command_python, writable=writable)


def confirm(result: Explained, b: Snapshot, request: ConfirmRequest, *, tell: Callable[[str], None] | None = None,
            note: Callable[[str], None] | None = None) -> dict[int, Confirmation]:
    """Undo each of `result`'s top causes here and measure the command in an interleaved trial; rank -> its
    Confirmation. `tell` receives what will be built and run, before anything runs, then the estimate from
    a first timed run; `note` the progress of the trials."""
    made = plan(result, b, request)
    if tell is not None:
        for line in made.text():
            tell(line)

    def estimate(one_run_s: float) -> None:
        if tell is not None:
            tell(made.estimate(one_run_s))

    return run_confirm(made, note=note, store=RunStore() if request.record else None, timed=estimate)


def _python_of_command(command: Sequence[str]) -> str | None:
    """The interpreter CMD starts with, as found on PATH, when its first word is python/python3."""
    try:
        Variant("B", python="python").argv(command)  # refuses a command that does not start with python
    except OptionError:
        return None
    return shutil.which(command[0])



class _Builder:
    """The variants of each trial: B as it is, B with the cause undone, and A where A can run."""

    def __init__(self, plan: ConfirmPlan, envs: ScratchEnvs) -> None:
        self.plan, self.envs = plan, envs
        self._dists: dict[str, dict[str, Distribution]] = {}

    def dists(self, python: str) -> dict[str, Distribution]:
        if python not in self._dists:
            self._dists[python] = distributions(python)
        return self._dists[python]

    def variants(self, undo: Undo) -> tuple[Variant, ...]:
        setup = self.plan.setup
        if undo.kind == "env":
            return (_env_variant("B", undo.name, undo.b_value), _env_variant("undone", undo.name, undo.a_value))
        if undo.kind == "system":
            command = setup.trial.command
            return (Variant("B", command=tuple(wrapper(undo.name, str(undo.b_value), command))),
                    Variant("undone", command=tuple(wrapper(undo.name, str(undo.a_value), command))))
        if undo.kind == "server":
            server = setup.trial.server
            assert server is not None  # the plan made a server argument without --server-cmd not confirmable
            return (Variant("B"), Variant("undone", server_command=with_flag(server.command, undo.name,
                                                                              undo.a_value)))
        return self._package_variants(undo)

    def _package_variants(self, undo: Undo) -> tuple[Variant, ...]:
        b_python = self.plan.b_python
        assert b_python is not None  # the plan made a package without B's interpreter not confirmable
        have = self.dists(b_python).get(undo.name)
        if have is None or have.version != undo.b_value:
            raise NotBuildable(f"{b_python} has {undo.name} {have.version if have else '(none)'}, not B's "
                               f"{undo.b_value}: give --b-python, B's interpreter")
        a_python = self.plan.setup.a_python
        a_has = self.dists(a_python).get(undo.name) if a_python else None
        if a_python and a_has is not None and a_has.version == undo.a_value:
            overlay = self.envs.from_interpreter(a_python, self.dists(a_python), undo.name)
        else:
            overlay = self.envs.from_index(b_python, undo.name, str(undo.a_value))
        inherited = os.environ.get("PYTHONPATH")
        path = str(overlay) + (os.pathsep + inherited if inherited else "")
        # B's interpreter in the command's place either way, so the two differ by the overlay alone.
        b = Variant("B", python=b_python)
        undone = Variant("undone", {"PYTHONPATH": path}, python=b_python)
        return (b, undone, Variant("A", python=a_python)) if a_python else (b, undone)


def _env_variant(name: str, var: str, value: FactValue) -> Variant:
    return Variant(name, unset_env=(var,)) if value is None else Variant(name, {var: str(value)})



def run_confirm(plan: ConfirmPlan, note: Callable[[str], None] | None = None, store: RunStore | None = None,
                timed: Callable[[float], None] | None = None) -> dict[int, Confirmation]:
    """Run the trial of every undoable cause of `plan`; rank -> its Confirmation. The scratch environments
    made on the way are removed (or kept complete in the cache) whatever happens, and each trial stops its
    runs and servers (run_trial). `timed` gets the duration of a first run of the command as B, before any
    trial, for the estimate."""
    out = {u.rank: not_confirmable(u) for u in plan.undos if u.why_not is not None}
    # SIGTERM/SIGHUP raise (as Ctrl-C does) between trials too, so a pip build or an overlay is cleaned up.
    knobs = [u.name for u in plan.runnable if u.kind == "system"]
    with terminations_raise(), guard(knobs), ScratchEnvs() as envs:
        builder = _Builder(plan, envs)
        for undo in plan.runnable:
            try:
                variants = builder.variants(undo)
            except (NotBuildable, DriftcheckError) as exc:
                out[undo.rank] = Confirmation(undo.rank, "not confirmable", f"not confirmable here: {exc}", undo)
                continue
            if timed is not None:
                timed(_first_run_s(plan, variants[0]))
                timed = None
            if note:
                note(f"confirm #{undo.rank}: {undo.describe()}: " + "; ".join(
                    f"{v.name} = {v.describe()}" for v in variants))
            trial = replace(plan.setup.trial, variants=variants,
                            label=f"{plan.setup.trial.label or 'confirm'}:{undo.rank}")
            try:
                result = run_trial(trial, note=note, store=store)
            except TrialError as exc:  # the command fails (or prints no figure) with the cause undone: said, per cause
                out[undo.rank] = Confirmation(undo.rank, "failed", f"could not measure: {exc}", undo)
            else:
                out[undo.rank] = verdict_of(undo, result)
            if note:
                note(f"confirm #{undo.rank}: {out[undo.rank].text}")
    return dict(sorted(out.items()))


def _first_run_s(plan: ConfirmPlan, b: Variant) -> float:
    """One run of the command as B (and its server), timed, output dropped: what the estimate scales, and a
    warm-up (the first run after a change of environment pays for cold caches)."""
    trial = plan.setup.trial
    env = b.environment(os.environ)
    begin = time.monotonic()
    with contextlib.ExitStack() as stack:
        if trial.server is not None:
            stack.enter_context(running_server(trial.server, env, b.name))
        try:
            process = subprocess.Popen(b.argv(trial.command), env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise UsageError(f"{shlex.join(trial.command)}: cannot start: {exc}") from None
        try:
            process.wait(timeout=trial.run_timeout_s)
        except subprocess.TimeoutExpired:
            pass  # the trial's own runs will say so
        finally:
            if process.poll() is None:
                stop_tree(process)
    return time.monotonic() - begin
