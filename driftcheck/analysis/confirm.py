"""`explain --confirm -- CMD`: undo each top cause for real, here, and measure with the user's own command.

For each of the top-ranked causes, the counterfactual is built on this machine and run against B as it is in
an interleaved trial (`driftcheck.runs.trial`: randomized rounds, each run a fresh process, the paired
signed-rank test of `stats/comparison`):

- an environment variable: B with A's value of it (or unset, where A had none);
- a package version: B's interpreter with A's version of that one distribution first on its path, its files
  copied from A's interpreter (`--a-python`) when it has that version, else installed from the index for B's
  interpreter (`driftcheck.runs.scratch_env`); neither environment is touched;
- a server argument: B's server command (`--server-cmd`, with `--ready`) with A's value of that flag;
- anything else (a driver, hardware, a machine-wide root-only setting, a clock another process set) is
  "not confirmable here", with why.

When A itself can be run here (`--a-python`: A's interpreter), it joins each package trial, so the verdict
says how much of the measured A→B shift undoing the cause recovers. Verdicts: `confirmed` (undoing it moves
the figure back, by so much of the shift, with the trial's pairs and p), `refuted` (no effect, and the trial
was fine enough to have seen one half the size of the shift, or `REFUTE_PCT` when the shift is not measured),
`inconclusive` with the resolution reached.

This module decides: what each cause becomes, the plan, the verdict of a trial. Building the environments
and running the trials is the face's (`driftcheck.api.confirm`).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.model import Explained, Explanation
from driftcheck.errors import UsageError
from driftcheck.runs.system_knob import KNOBS
from driftcheck.runs.trial import TrialPlan, TrialResult, describe_comparison
from driftcheck.snapshot.model import Snapshot
from driftcheck.stats.comparison import Comparison

# A fact's value as a snapshot holds it: what undoing a cause puts back (a variable's value, a version, a flag's).
FactValue = str | int | float | bool | None | list["FactValue"] | dict[str, "FactValue"]

DEFAULT_TOP = 3
# Without A measured here, "no effect" is decided when an effect this large (in %) would have been seen.
REFUTE_PCT = 5.0
# Settings of the whole machine that only root changes: never touched by --confirm.
_SYSTEM_CATEGORIES = frozenset({"cpu_governor", "thp_memory", "numa", "gpu_clock_power", "mig_ecc_persistence",
                                "container_limits", "kernel_os", "pcie_link", "p2p_topology"})
_PACKAGES = ("probes", "packages", "data", "packages")
_SERVER_ARGS = ("probes", "server", "data", "server_args")

# --- what can be undone, and how ----------------------------------------------------------------------

@dataclass(frozen=True)
class Undo:
    """How one ranked cause is undone here: the kind, A's and B's values, or why it cannot be."""

    rank: int
    title: str
    kind: str  # env | package | server | system | none
    name: str = ""
    a_value: FactValue = None  # A's value (None: unset/absent on A)
    b_value: FactValue = None
    why_not: str | None = None

    def describe(self) -> str:
        """What undoing it means, in a few words: `NCCL_ALGO unset`, `pkg7 1.0 (A's) instead of 1.1`."""
        if self.kind == "env":
            return f"{self.name} unset" if self.a_value is None else f"{self.name}={self.a_value}"
        if self.kind == "package":
            return f"{self.name} {self.a_value} (A's) instead of {self.b_value}"
        if self.kind == "system":
            return f"{self.name} = {self.a_value} (A's) instead of {self.b_value}"
        if self.kind == "server":
            return f"the server with {_flag(self.name)} {_shown(self.a_value)} (A's) instead of {_shown(self.b_value)}"
        return self.title


def _shown(value: FactValue) -> str:
    return "(absent)" if value is None else str(value)


def _flag(arg: str) -> str:
    return "--" + arg.replace("_", "-")


def _changes_of(result: Explained, explanation: Explanation) -> list[Change]:
    wanted = set(explanation.evidence)
    return [c for c in result.diff.changes if c.path in wanted]


def undo_of(result: Explained, explanation: Explanation) -> Undo:
    """How `explanation` can be undone on this machine, or why it cannot."""
    base = Undo(explanation.rank, explanation.title, "none")
    revert = explanation.revert
    if revert is not None and revert.get("kind") == "env":
        return replace(base, kind="env", name=str(revert["name"]), a_value=revert.get("value"),
                       b_value=revert.get("current"))
    changes = _changes_of(result, explanation)
    for change in changes:
        if change.path in KNOBS and isinstance(change.before, str) and isinstance(change.after, str):
            return replace(base, kind="system", name=KNOBS[change.path], a_value=change.before, b_value=change.after)
        if change.parts[:4] == _PACKAGES and len(change.parts) >= 5:
            name = str(change.parts[4])
            a_entry = ((result.diff.a.probe_data("packages") or {}).get("packages") or {}).get(name) or {}
            b_entry = ((result.diff.b.probe_data("packages") or {}).get("packages") or {}).get(name) or {}
            a_version, b_version = a_entry.get("version"), b_entry.get("version")
            if a_version is None:
                return replace(base, why_not=f"not confirmable here: {name} is not installed on A; taking a "
                                             "distribution away from B's environment is not built here")
            if b_version is None:
                return replace(base, why_not=f"not confirmable here: {name} is not installed on B, so there is "
                                             "no environment of B to put A's version in")
            return replace(base, kind="package", name=name, a_value=str(a_version), b_value=str(b_version))
        if change.parts[:4] == _SERVER_ARGS and len(change.parts) == 5:
            return replace(base, kind="server", name=str(change.parts[4]), a_value=change.before,
                           b_value=change.after)
    if explanation.category in _SYSTEM_CATEGORIES:
        return replace(base, why_not=(f"not confirmable here: a machine-wide setting ({explanation.category}) "
                                      "only root can change, which --confirm does not change (only "
                                      "transparent huge pages, with --allow-system-changes); set it as on A by "
                                      "hand and measure with `driftcheck try`"))
    return replace(base, why_not=(f"not confirmable here: a {explanation.category} change (a driver, the "
                                  "hardware, or a setting of another process) cannot be undone for one run"))


# --- the plan --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConfirmSetup:
    """What the trials run: the user's command, the trial's settings, and where A's and B's environments are.

    `trial` is a TrialPlan whose `variants` are ignored (each confirmation makes its own)."""

    trial: TrialPlan
    a_python: str | None = None
    b_python: str | None = None
    allow_system_changes: bool = False


@dataclass
class ConfirmPlan:
    """The causes to undo (and those that cannot be), said before anything runs."""

    setup: ConfirmSetup
    undos: list[Undo]
    b_python: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def runnable(self) -> list[Undo]:
        """The causes a trial will be run for."""
        return [u for u in self.undos if u.why_not is None]

    def variants_of(self, undo: Undo) -> int:
        """How many variants the trial of `undo` runs per round (B, undone, and A where A can run)."""
        return 3 if undo.kind == "package" and self.setup.a_python else 2

    @property
    def max_runs(self) -> int:
        """The most runs of the command the trials can take."""
        return sum(self.variants_of(u) * self.setup.trial.max_pairs for u in self.runnable)

    def text(self) -> list[str]:
        """What will be built and run, for stderr, before anything runs."""
        if not self.runnable:
            return ["confirm: none of the top causes can be undone here; nothing to run"]
        command = shlex.join(self.setup.trial.command)
        lines = [f"confirm: {len(self.runnable)} cause(s) to undo, each in an interleaved trial of `{command}` "
                 f"(at most {self.setup.trial.max_pairs} rounds, stopping once decided), {self.max_runs} runs "
                 "at most:"]
        for undo in self.runnable:
            build = ""
            if undo.kind == "package":
                source = (f"copied from {self.setup.a_python} (from the package index with pip where it has "
                          "another version)" if self.setup.a_python else "from the package index with pip (cached)")
                build = f"; builds a scratch environment: {self.b_python or 'B'}'s with {undo.name} " \
                        f"{undo.a_value} {source}"
                if self.setup.a_python:
                    build += "; A runs too, to measure the whole shift"
            if undo.kind == "system":
                build = f"; sets {undo.name} for each run (both sides) and puts back what it was"
            lines.append(f"  #{undo.rank}: {undo.describe()}{build}")
        lines.extend(self.notes)
        return lines

    def estimate(self, one_run_s: float) -> str:
        """About how long, from one run of the command taking `one_run_s`."""
        return (f"confirm: one run of the command took {one_run_s:.2f} s: at most about "
                f"{_duration(self.max_runs * one_run_s)} for {self.max_runs} runs (less when decided early)")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def confirm_plan(result: Explained, b: Snapshot, setup: ConfirmSetup, top: int = DEFAULT_TOP, *,
                 command_python: str | None = None, writable: Collection[str] = ()) -> ConfirmPlan:
    """The plan of `explain --confirm` for the `top` ranked causes; a UsageError at once for a command
    that cannot run here.

    What the plan needs to know of this machine is given: `command_python`, the interpreter the command's
    leading python word finds (B's, unless `setup.b_python` names it), and `writable`, the machine-wide
    settings (their paths) this user may write."""
    if not setup.trial.command:
        raise UsageError("--confirm needs your benchmark command after --, e.g. "
                         "driftcheck explain A B --confirm -- python bench.py")
    undos = [undo_of(result, e) for e in result.explanations[:top]]
    b_python = setup.b_python or command_python
    recorded = (b.probe_data("packages") or {}).get("interpreter")
    notes = []
    if any(u.kind == "package" for u in undos) and not setup.b_python and recorded and recorded != b_python:
        notes.append(f"confirm: B's snapshot was of {recorded}; the command runs {b_python or 'its own interpreter'} "
                     "(give --b-python to choose)")
    if setup.trial.server is None:
        undos = [replace(u, why_not="not confirmable here: a server argument needs the server started per run: "
                                    "give --server-cmd (B's) and --ready URL")
                 if u.kind == "server" else u for u in undos]
    undos = [_system_allowed(u, setup, writable) if u.kind == "system" else u for u in undos]
    if b_python is None:
        undos = [replace(u, why_not="not confirmable here: the command does not start with python; give "
                                    "--b-python (B's interpreter) for a package to be undone")
                 if u.kind == "package" else u for u in undos]
    return ConfirmPlan(setup, undos, b_python, notes)


def _system_allowed(undo: Undo, setup: ConfirmSetup, writable: Collection[str]) -> Undo:
    if not setup.allow_system_changes:
        return replace(undo, why_not=f"not confirmable without --allow-system-changes: {undo.name} is a setting of "
                                     "the whole machine (needs root); with it, it is set for each run and put back")
    if undo.name not in writable:
        return replace(undo, why_not=f"not confirmable here: {undo.name} is not writable by this user (needs root)")
    return undo


# --- the trials ------------------------------------------------------------------------------------------

@dataclass
class Confirmation:
    """What undoing one cause did: the verdict word, the sentence, and the trial behind it."""

    rank: int
    verdict: str  # confirmed | refuted | inconclusive | not confirmable | failed (the command did not run through)
    text: str
    undo: Undo
    trial: TrialResult | None = None
    recovered_pct: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The confirmation as `explain --format json` carries it on its explanation."""
        return {"verdict": self.verdict, "text": self.text, "undo": self.undo.describe(), "kind": self.undo.kind,
                "recovered_pct": None if self.recovered_pct is None else round(self.recovered_pct, 1),
                "trial": None if self.trial is None else self.trial.to_json()}


def not_confirmable(undo: Undo) -> Confirmation:
    """The confirmation of a cause the plan could not undo here, saying why."""
    return Confirmation(undo.rank, "not confirmable", str(undo.why_not), undo)


def with_flag(command: Sequence[str], arg: str, value: FactValue) -> tuple[str, ...]:
    """`command` with the server flag of `arg` set to `value`: `--arg VALUE`, `--arg` alone for True, and
    left out for False or None (absent on that side); any occurrence it had (`--arg X`, `--arg=X`) goes."""
    flag = _flag(arg)
    out: list[str] = []
    words = list(command)
    index = 0
    while index < len(words):
        word = words[index]
        if word == flag:
            following = words[index + 1] if index + 1 < len(words) else None
            index += 2 if following is not None and not following.startswith("--") else 1
            continue
        if not word.startswith(flag + "="):
            out.append(word)
        index += 1
    if value is True:
        out.append(flag)
    elif value is not None and value is not False:
        out += [flag, value if isinstance(value, str) else _json_scalar(value)]
    return tuple(out)


def _json_scalar(value: FactValue) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value))
    return str(value)


def verdict_of(undo: Undo, result: TrialResult) -> Confirmation:
    """The verdict on one cause from its trial: B (the reference) against B undone, and A when it ran."""
    undone = result.comparisons["undone"]
    shift = result.comparisons.get("A")
    head = f"with {undo.describe()}"
    moved = describe_comparison(result, "undone")
    if shift is not None and shift.decided:
        l_u, l_a = math.log1p(undone.effect_pct / 100), math.log1p(shift.effect_pct / 100)
        shift_pct = _pct(-l_a)  # B against A
        after_pct = _pct(l_u - l_a)  # B undone against A
        recovered = l_u / l_a * 100
        if undone.decided and l_u * l_a > 0:
            text = (f"confirmed: {head}, B recovers {recovered:.0f} % of the shift ({shift_pct:+.1f} % → "
                    f"{after_pct:+.1f} %, {undone.n} pairs, p={undone.p_value:.2g})")
            return Confirmation(undo.rank, "confirmed", text, undo, result, recovered)
        if undone.decided:
            return Confirmation(undo.rank, "refuted", f"refuted: {head}, B moves away from A ({moved})", undo,
                                result, recovered)
        if undone.detectable_pct <= abs(shift_pct) / 2:
            return Confirmation(undo.rank, "refuted", (f"refuted: {head}, no effect ({_resolution(undone)}; the "
                                                       f"shift is {shift_pct:+.1f} %)"), undo, result, recovered)
        return Confirmation(undo.rank, "inconclusive", (f"inconclusive: {head}, nothing resolved ({_resolution(undone)}"
                                                        f"; the shift is {shift_pct:+.1f} %)"), undo, result)
    lead = ("" if shift is None else
            f"A and B do not differ here ({describe_comparison(result, 'A').split(': ', 1)[1]}); ")
    if undone.decided:
        better = result.verdict("undone") in ("faster",)
        if shift is None and result.higher_is_better is not None:
            word = "confirmed" if better else "refuted"
            what = "B's figure moves back" if better else "B's figure moves further away"
            return Confirmation(undo.rank, word, f"{word}: {head}, {what} ({moved}; A's whole shift was not "
                                                 "measured here)", undo, result)
        return Confirmation(undo.rank, "inconclusive", f"inconclusive: {lead}{head}, {moved}", undo, result)
    if shift is None and undone.detectable_pct <= REFUTE_PCT:
        return Confirmation(undo.rank, "refuted", f"refuted: {head}, no effect ({_resolution(undone)})", undo, result)
    return Confirmation(undo.rank, "inconclusive", f"inconclusive: {lead}{head}, nothing resolved "
                                                   f"({_resolution(undone)})", undo, result)


def _pct(log_ratio: float) -> float:
    return (math.exp(log_ratio) - 1) * 100


def _resolution(comparison: Comparison) -> str:
    if math.isinf(comparison.detectable_pct):
        return f"{comparison.n} pairs: too few for any effect to be seen"
    return f"{comparison.effect_pct:+.1f} % in {comparison.n} pairs: ±{comparison.detectable_pct:.1f} % would " \
           "have been seen"
