"""An interleaved A/B trial of the user's own command: `driftcheck try`.

Each round runs every variant once, as a fresh process, in an order drawn at random (seeded, reported),
so a drift of the machine over time (another tenant, heat, a cache filling) falls on both sides alike
(randomized interleaved trials, Abedi & Brecht, ICPE 2017). The figure of a run is one the output printed
(the patterns of `driftcheck run`) or its wall time. After each round that is a planned look, every
variant is compared with the first (`driftcheck.stats.comparison`); the trial stops when every
comparison is decided, at the last planned look, or when the time budget would be overrun.

A `--server-cmd` is started before each run with the variant's environment, waited for until its URL
answers, and stopped afterwards, its whole process tree, whatever happens (an error, Ctrl-C).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType

from driftcheck.errors import DriftcheckError, OptionError
from driftcheck.hosts.process_tree import interrupts_deferred, signal_group, stop_tree
from driftcheck.hosts.signals import handlers_installed
from driftcheck.probes.redact import Redactor
from driftcheck.runs.metrics import Metric, Pattern
from driftcheck.runs.output import TAIL_LINES, OutputReader, split_lines
from driftcheck.runs.render import describe_comparison as describe_comparison  # where `explain --confirm` takes it
from driftcheck.runs.render import headline
from driftcheck.runs.shapes import TrialJson, TrialTags, VariantJson
from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.stats.comparison import DEFAULT_MAX_PAIRS, Comparison, LookPlan, compare, log_ratios, plan_looks

WALL = "wall_time"
# The leading word of CMD an interpreter variant replaces: python, python3, python3.12 (by any path).
_PYTHON_WORD = re.compile(r"python(?:\d+(?:\.\d+)?)?")
# After the command ends, how long its last output may take to be read.
_DRAIN_S = 2.0


class TrialInterrupted(DriftcheckError):
    """The trial was sent SIGTERM or SIGHUP (a scheduler, `timeout`); its runs and server are stopped."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}; the running command and server were ended")
        self.exit_code = 128 + signum


class TrialError(DriftcheckError):
    """A run of the trial could not give its figure (it failed, printed none, its server never answered)."""

    exit_code = 2


@dataclass(frozen=True)
class Variant:
    """One side of the trial: environment changes, an interpreter, or a whole command line of its own."""

    name: str
    set_env: Mapping[str, str] = field(default_factory=dict)
    unset_env: tuple[str, ...] = ()
    python: str | None = None
    command: tuple[str, ...] | None = None
    server_command: tuple[str, ...] | None = None  # this variant's own --server-cmd (a server flag to try)

    def describe(self) -> str:
        """How this variant differs, in a few words ("NCCL_ALGO=Tree", "python /v2/bin/python", "as given")."""
        parts = [f"{k}={v}" for k, v in self.set_env.items()] + [f"-{k}" for k in self.unset_env]
        if self.python:
            parts.append(f"python {self.python}")
        if self.command is not None:
            parts.append(shlex.join(self.command))
        if self.server_command is not None:
            parts.append("server: " + shlex.join(self.server_command))
        return ", ".join(parts) or "as given"

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with this variant's changes."""
        env = {k: v for k, v in base.items() if k not in self.unset_env}
        env.update(self.set_env)
        return env

    def argv(self, command: Sequence[str]) -> list[str]:
        """The command line this variant runs: its own, else `command` with its interpreter put in."""
        argv = list(self.command if self.command is not None else command)
        if self.python:
            if not argv or not _PYTHON_WORD.fullmatch(os.path.basename(argv[0])):
                raise OptionError(f"{self.name.lower()}_python", self.python,
                                  "the command must start with the word python or python3 to put an interpreter "
                                  "in its place")
            argv[0] = self.python
        return argv

    def redacted(self, redactor: Redactor) -> Variant:
        """This variant as it is shown and kept: secret values of its environment and command lines digested
        (what runs is the variant itself)."""
        def argv(words: tuple[str, ...] | None) -> tuple[str, ...] | None:
            return None if words is None else tuple(redactor.argv(words))

        return replace(self, set_env=redactor.environ(self.set_env), command=argv(self.command),
                       python=None if self.python is None else redactor.text(self.python),
                       server_command=argv(self.server_command))

    def to_json(self) -> VariantJson:
        """The variant as reports keep it."""
        return {"name": self.name, "set_env": dict(self.set_env), "unset_env": list(self.unset_env),
                "python": self.python, "command": None if self.command is None else list(self.command),
                "server_command": None if self.server_command is None else list(self.server_command)}


def parse_env_changes(option: str, specs: Sequence[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """`NAME=VALUE` (set) and `-NAME` (unset) specs, several per spec separated by spaces; OptionError else."""
    set_env: dict[str, str] = {}
    unset: list[str] = []
    for spec in specs:
        for word in shlex.split(spec):
            name, sep, value = word.partition("=")
            if word.startswith("-") and not sep and word[1:].isidentifier():
                unset.append(word[1:])
            elif sep and name.isidentifier():
                set_env[name] = value
            else:
                raise OptionError(option, word, "give NAME=VALUE to set a variable or -NAME to unset it")
    return set_env, tuple(unset)


@dataclass(frozen=True)
class ServerSpec:
    """A server started before each run and stopped after it."""

    command: tuple[str, ...]
    ready_url: str
    ready_timeout_s: float = 120.0


@dataclass(frozen=True)
class TrialPlan:
    """Everything a trial needs, checked before the first run."""

    command: tuple[str, ...]
    variants: tuple[Variant, ...]
    patterns: tuple[Pattern, ...] = ()
    metric: str | None = None  # the figure's name; None: the first headline figure; WALL: wall time
    max_pairs: int = DEFAULT_MAX_PAIRS
    budget_s: float | None = None
    alpha: float = 0.05
    seed: int | None = None
    server: ServerSpec | None = None
    run_timeout_s: float | None = None
    label: str | None = None
    record: bool = True
    tags: TrialTags = field(default_factory=lambda: TrialTags())  # kept in each run record's telemetry["trial"]


@dataclass
class TrialRun:
    """One run: which variant, in which round, its figure and how long it took."""

    variant: str
    round: int
    value: float
    duration_s: float
    run_id: int | None


@dataclass
class TrialResult:
    """The trial's outcome: the runs, the comparisons at the last look, and why it stopped."""

    plan: TrialPlan
    seed: int
    looks: LookPlan
    metric: str
    unit: str | None
    higher_is_better: bool | None
    runs: list[TrialRun]
    comparisons: dict[str, Comparison]
    stopped: str
    elapsed_s: float

    def values(self, variant: str) -> list[float]:
        """The figures of `variant`, round by round."""
        return [r.value for r in sorted(self.runs, key=lambda r: r.round) if r.variant == variant]

    def verdict(self, name: str) -> str:
        """`slower`, `faster` (or `higher`/`lower` where the unit does not say), or `no difference resolved`."""
        comparison = self.comparisons[name]
        if not comparison.decided:
            return "no difference resolved"
        up = comparison.effect_pct > 0
        if self.higher_is_better is None:
            return "higher" if up else "lower"
        return "faster" if up == self.higher_is_better else "slower"

    @property
    def differs(self) -> bool:
        """Whether any comparison was decided."""
        return any(c.decided for c in self.comparisons.values())

    def redacted(self, redactor: Redactor) -> TrialResult:
        """The result as it is shown: its command, label and variants redacted."""
        plan = replace(self.plan, command=tuple(redactor.argv(self.plan.command)),
                       variants=tuple(v.redacted(redactor) for v in self.plan.variants),
                       label=None if self.plan.label is None else redactor.text(self.plan.label))
        return replace(self, plan=plan)

    def to_json(self) -> TrialJson:
        """The trial as `try --format json` prints it."""
        return {"command": list(self.plan.command), "variants": [v.to_json() for v in self.plan.variants],
                "seed": self.seed, "metric": self.metric, "unit": self.unit, "higher_is_better": self.higher_is_better,
                "plan": self.looks.to_json(), "stopped": self.stopped, "elapsed_s": round(self.elapsed_s, 3),
                "comparisons": {name: {**c.to_json(), "verdict": self.verdict(name)}
                                for name, c in self.comparisons.items()},
                "runs": [{"variant": r.variant, "round": r.round, "value": r.value,
                          "duration_s": round(r.duration_s, 4), "run_id": r.run_id} for r in self.runs]}


# --- one run -------------------------------------------------------------------------------------------

def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0):
            return True
    except urllib.error.HTTPError:
        return True  # an error page is an answer: the server is up
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _tail(path: Path) -> str:
    try:
        lines = split_lines(path.read_text(errors="replace"))
    except OSError:
        return ""
    return "\n".join(lines[-TAIL_LINES:])


@contextlib.contextmanager
def running_server(spec: ServerSpec, env: Mapping[str, str], variant: str) -> Iterator[subprocess.Popen[bytes]]:
    """The server of one run, started with `env`, up once its URL answers; stopped with its tree on exit."""
    with tempfile.NamedTemporaryFile(prefix="driftcheck-try-server-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
    process: subprocess.Popen[bytes] | None = None
    try:
        # Started with interrupts deferred, inside the `try`: an interrupt between the start and the assignment
        # would leave the server running unseen; one deferred to the end of the block finds it to stop.
        with interrupts_deferred(), log_path.open("wb") as log_file:
            try:
                process = subprocess.Popen(list(spec.command), env=dict(env), stdout=log_file,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as exc:
                raise TrialError(f"variant {variant}: the server command could not start: {exc}") from None
        deadline = time.monotonic() + spec.ready_timeout_s
        while not _answers(spec.ready_url):
            if process.poll() is not None:
                raise TrialError(f"variant {variant}: the server exited ({process.returncode}) before "
                                 f"{spec.ready_url} answered; its last output:\n{_tail(log_path)}")
            if time.monotonic() > deadline:
                raise TrialError(f"variant {variant}: {spec.ready_url} did not answer within "
                                 f"{spec.ready_timeout_s:g} s; the server's last output:\n{_tail(log_path)}")
            time.sleep(0.1)
        yield process
    finally:
        if process is not None:
            stop_tree(process)
        log_path.unlink(missing_ok=True)


@dataclass
class _Output:
    metrics: list[Metric]
    tail: list[str]
    exit_code: int
    duration_s: float
    started_at: str


def _run_command(argv: Sequence[str], env: Mapping[str, str], patterns: tuple[Pattern, ...],
                 timeout_s: float | None) -> _Output:
    """Run `argv` once, its output read for figures as it comes by the reader every verb uses (not shown, not
    kept but for its last lines); its own process group, ended with it. The wall time runs from the start to
    the exit of the process."""
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    begin = time.perf_counter()
    reader = OutputReader(patterns)
    process: subprocess.Popen[bytes] | None = None
    thread: threading.Thread | None = None
    try:
        # Started with interrupts deferred, inside the `try`: one deferred to the block's end finds it to stop.
        with interrupts_deferred():
            try:
                process = subprocess.Popen(list(argv), env=dict(env), stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as exc:
                raise TrialError(f"{shlex.join(argv)}: could not start: {exc}") from None
            thread = threading.Thread(target=reader.read, args=(process.stdout,), name="try-output", daemon=True)
            thread.start()
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise TrialError(f"{shlex.join(argv)}: still running after {timeout_s:g} s (--run-timeout)") from None
    finally:
        duration = time.perf_counter() - begin
        if process is not None and process.poll() is None:
            stop_tree(process)
        elif process is not None:  # what the command left in its group would disturb the next runs (and hold the pipe)
            signal_group(process.pid, signal.SIGTERM)
        if thread is not None:
            thread.join(_DRAIN_S)
    return _Output(reader.metrics(), reader.tail(), process.returncode, duration, started_at)


def _figure(output: _Output, metric: str | None) -> Metric | None:
    if metric == WALL:
        return Metric(WALL, output.duration_s, "s", "Wall time", "driftcheck try")
    if metric is None:
        shown = headline(output.metrics)
        return shown[0] if shown else None
    return next((m for m in output.metrics if m.name == metric), None)


# --- the trial -----------------------------------------------------------------------------------------

Progress = Callable[[str], None]


@dataclass
class _State:
    plan: TrialPlan
    seed: int
    looks: LookPlan
    note: Progress | None
    store: RunStore | None
    metric: str | None
    unit: str | None = None
    higher: bool | None = None
    runs: list[TrialRun] = field(default_factory=list)
    start: float = field(default_factory=time.monotonic)


def _one_run(state: _State, variant: Variant, round_no: int) -> TrialRun:
    plan = state.plan
    argv = variant.argv(plan.command)
    env = variant.environment(os.environ)
    with contextlib.ExitStack() as stack:
        if plan.server is not None:
            server = plan.server
            if variant.server_command is not None:
                server = ServerSpec(variant.server_command, server.ready_url, server.ready_timeout_s)
            stack.enter_context(running_server(server, env, variant.name))
        output = _run_command(argv, env, plan.patterns, plan.run_timeout_s)
    if output.exit_code != 0:
        raise TrialError(f"variant {variant.name} ({shlex.join(argv)}) exited {output.exit_code}; its last "
                         "output:\n" + "\n".join(output.tail))
    figure = _figure(output, state.metric)
    if figure is None:
        wanted = f"the figure {state.metric!r}" if state.metric else "a figure"
        raise TrialError(f"variant {variant.name}: the output held no {wanted} (give --metric NAME=REGEX, or --wall "
                         "to compare wall time); its last output:\n" + "\n".join(output.tail))
    if state.metric is None:
        state.metric = figure.name
    if state.unit is None:
        state.unit, state.higher = figure.unit, figure.higher_is_better
    if not figure.value > 0 or math.isinf(figure.value):  # `not >`: NaN too (`echo 1e999 ms` reads as infinity)
        raise TrialError(f"variant {variant.name}: {figure.label} = {figure.value:g}: a ratio needs positive, "
                         "finite figures")
    run_id = None
    if state.store is not None and plan.record:
        label = f"try:{plan.label or state.seed}:{variant.name}"
        record = RunRecord(command=argv, cwd=os.getcwd(), host=socket.gethostname(), started_at=output.started_at,
                           duration_s=output.duration_s, exit_code=output.exit_code, snapshot_id=None, label=label,
                           metrics=[*output.metrics, *([figure] if figure.name == WALL else [])],
                           telemetry={"trial": {**plan.tags, "seed": state.seed, "round": round_no,
                                                "variant": variant.name, "differs_by": variant.describe(),
                                                "figure": figure.name}})
        run_id = state.store.add(record)
    return TrialRun(variant.name, round_no, figure.value, output.duration_s, run_id)


def _compare_all(state: _State, alpha: float) -> dict[str, Comparison]:
    reference = state.plan.variants[0].name
    by_variant: dict[str, list[float]] = {}
    for run in sorted(state.runs, key=lambda r: r.round):
        by_variant.setdefault(run.variant, []).append(run.value)
    return {v.name: compare(log_ratios(by_variant[reference], by_variant[v.name]), alpha)
            for v in state.plan.variants[1:]}


@contextlib.contextmanager
def terminations_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP end the trial as Ctrl-C does, by an exception, so every `finally` stops its process
    tree; Python's default would exit at once and leave the server running. Main thread only."""
    def raise_interrupted(signum: int, frame: FrameType | None) -> None:
        raise TrialInterrupted(signum)

    with handlers_installed(raise_interrupted, (signal.SIGTERM, signal.SIGHUP)):
        yield


def run_trial(plan: TrialPlan, note: Progress | None = None, store: RunStore | None = None) -> TrialResult:
    """Run the interleaved trial of `plan` until decided, its last look or its budget; progress to `note`.
    SIGTERM/SIGHUP during the trial raise TrialInterrupted once the running command and server are stopped."""
    with terminations_raise():
        return _run_rounds(plan, note, store)


def _run_rounds(plan: TrialPlan, note: Progress | None, store: RunStore | None) -> TrialResult:
    if len(plan.variants) < 2:
        raise OptionError("b", None, "a trial needs at least two variants (--a ... --b ...)")
    for variant in plan.variants:  # refuse, before any run, what cannot run
        if not variant.argv(plan.command):
            raise OptionError(f"{variant.name.lower()}_cmd", None, "this variant has no command to run")
        if plan.server is not None and not (variant.server_command or plan.server.command):
            raise OptionError("server_cmd", None, f"variant {variant.name} has no server command")
    seed = plan.seed if plan.seed is not None else random.SystemRandom().randrange(2 ** 31)
    order = random.Random(seed)
    looks = plan_looks(plan.max_pairs, plan.alpha, comparisons=len(plan.variants) - 1)
    state = _State(plan, seed, looks, note, store if plan.record else None, plan.metric)
    if note:
        levels = ", ".join(f"{n} (p <= {looks.level(n) or 0.0:.3g})" for n in looks.looks)
        note(f"trial: up to {plan.max_pairs} rounds, looks at {levels}, seed {seed}")
    comparisons: dict[str, Comparison] = {}
    stopped = "max-pairs"
    for round_no in range(1, plan.max_pairs + 1):
        names = [v.name for v in plan.variants]
        order.shuffle(names)
        for name in names:
            variant = next(v for v in plan.variants if v.name == name)
            run = _one_run(state, variant, round_no)
            state.runs.append(run)
            if note:
                note(f"round {round_no} {name}: {run.value:g}{' ' + state.unit if state.unit else ''} "
                     f"({run.duration_s:.2f} s)")
        elapsed = time.monotonic() - state.start
        out_of_budget = plan.budget_s is not None and elapsed * (round_no + 1) / round_no > plan.budget_s
        final = round_no == plan.max_pairs or out_of_budget
        alpha = looks.alpha_at(round_no, final)
        if alpha is None:
            continue
        comparisons = _compare_all(state, alpha)
        if note:
            note(f"look at {round_no} rounds: " + "; ".join(
                f"{n} p={c.p_value:.3g} (needs <= {alpha:.3g})" for n, c in comparisons.items()))
        if all(c.decided for c in comparisons.values()):
            stopped = "decided"
            break
        if out_of_budget:
            stopped = "budget"
            break
    return TrialResult(plan, seed, looks, state.metric or WALL, state.unit, state.higher, state.runs, comparisons,
                       stopped, time.monotonic() - state.start)


def recorded_result(plan: TrialPlan, records: Sequence[RunRecord]) -> TrialResult | None:
    """The trial of `plan` that `records` (the run records of one earlier trial of two variants) hold, as the
    rule decides it again from their figures: decided at a planned look, run to its last, or decided at the
    unplanned look where its budget cut it short; None when the records stop short of all three (a trial cut
    off undecided, by a budget or Ctrl-C), or are not such a trial."""
    names = [v.name for v in plan.variants]
    if len(names) != 2 or not records:
        return None
    figure = records[0].telemetry.get("trial", {}).get("figure")
    seed = records[0].telemetry.get("trial", {}).get("seed")
    by_round: dict[int, dict[str, tuple[RunRecord, float]]] = {}
    for record in records:
        trial = record.telemetry.get("trial", {})
        metric = record.metric(str(figure))
        if metric is None or trial.get("variant") not in names or trial.get("seed") != seed:
            return None
        by_round.setdefault(int(trial["round"]), {})[trial["variant"]] = (record, metric.value)
    rounds = sorted(n for n, runs in by_round.items() if len(runs) == 2)
    if rounds != list(range(1, len(rounds) + 1)):
        return None
    looks = plan_looks(plan.max_pairs, plan.alpha, comparisons=1)
    values = {name: [by_round[n][name][1] for n in rounds] for name in names}

    def result_at(look: int, comparison: Comparison, stopped: str) -> TrialResult:
        runs = [TrialRun(name, n, value, record.duration_s, record.id)
                for n in rounds[:look] for name, (record, value) in by_round[n].items()]
        shown = records[0].metric(str(figure))
        unit = shown.unit if shown else None
        higher = shown.higher_is_better if shown else None
        elapsed = sum(r.duration_s for r in runs)
        return TrialResult(plan, int(seed or 0), looks, str(figure), unit, higher, runs,
                           {names[1]: comparison}, stopped, elapsed)

    for look in (n for n in looks.looks if n <= len(rounds)):
        comparison = compare(log_ratios(values[names[0]][:look], values[names[1]][:look]), looks.level(look) or 0.0)
        stopped = "decided" if comparison.decided else "max-pairs" if look == plan.max_pairs else ""
        if stopped:
            return result_at(look, comparison, stopped)
    last = len(rounds)
    if last and looks.level(last) is None:
        # Cut short between planned looks (its budget ran out): `run_trial` spent there, at an unplanned last
        # look, all the alpha the planned looks before it had not, and a trial that decided so is finished.
        spare = looks.alpha_at(last, final=True)
        comparison = compare(log_ratios(values[names[0]], values[names[1]]), spare or 0.0)
        if spare and comparison.decided:
            return result_at(last, comparison, "decided")
    return None
