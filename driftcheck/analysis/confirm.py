"""`explain --confirm`: rerun the calibrated benchmark with a suspect reverted, per process.

Only what one process can undo for itself is confirmable (an environment variable); a driver, a
clock or a cable is not, and says so. The benchmark runs here, in child processes: once with the
variable as B had it, once with A's value put back, so this confirms a cause on *this* machine.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from driftcheck.analysis.explain.bench import bench_worse
from driftcheck.analysis.explain.model import Explained, Explanation
from driftcheck.baselines.compare import compare_records
from driftcheck.baselines.deps import TORCH_PIN
from driftcheck.baselines.plans import SUITE_BUDGET_S
from driftcheck.errors import UsageError
from driftcheck.snapshot.model import Snapshot

BenchRun = Callable[[dict[str, str | None]], Any]
_BENCH_TIMEOUT_S = 600.0
# A child `driftcheck bench` pays an interpreter start and torch's import on top of the suite's budget.
_RUN_OVERHEAD_S = 5.0
DEFAULT_TOP = 3


@dataclass(frozen=True)
class ConfirmPlan:
    """What `explain --confirm` will run, said before it runs: the causes it can revert, the runs, the time."""

    suite: str
    device: str
    causes: tuple[Explanation, ...]

    @property
    def runs(self) -> int:
        """Benchmark runs in all: one as B has it and one reverted, per cause."""
        return 2 * len(self.causes)

    @property
    def estimate_s(self) -> float:
        """About how long the runs take: the suite's budget plus a child's start-up, per run."""
        budget = SUITE_BUDGET_S.get(self.device, SUITE_BUDGET_S["cpu"]).get(self.suite, SUITE_BUDGET_S["cpu"]["quick"])
        return self.runs * (budget + _RUN_OVERHEAD_S)

    def text(self) -> str:
        """One line for stderr, before anything runs."""
        if not self.causes:
            return "confirm: none of the top causes can be reverted inside one process; nothing to run"
        names = ", ".join(str((c.revert or {}).get("name")) for c in self.causes)
        return (f"confirm: {len(self.causes)} cause(s) to revert ({names}); each runs `driftcheck bench --suite "
                f"{self.suite}` twice (as B, then with A's value): {self.runs} runs on {self.device}, "
                f"about {_duration(self.estimate_s)}")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def confirm_plan(result: Explained, a: Snapshot, b: Snapshot, top: int = DEFAULT_TOP) -> ConfirmPlan:
    """The plan of `explain --confirm` for A and B; a UsageError at once when neither holds benchmarks.

    Without a benchmark figure on either side there is nothing a reverted cause could move back, so no
    run is worth its minutes.
    """
    held = [s for s in (a, b) if (s.probe_data("bench") or {}).get("results")]
    if not held:
        raise UsageError("confirm needs benchmark figures, and neither snapshot holds any: save the "
                         "reference with `driftcheck baseline save NAME --bench quick` first")
    # The suite the snapshots' own benchmarks ran, A's first: a confirmation measures what they measured.
    recorded = (a.probe_data("bench") or b.probe_data("bench") or {})
    suite = str(recorded.get("suite") or "quick")
    device = str(recorded.get("device") or "cpu")
    causes = tuple(e for e in result.explanations[:top] if e.revert is not None)
    return ConfirmPlan(suite if suite in SUITE_BUDGET_S["cpu"] else "quick", device, causes)


def _compare(before: Any, after: Any) -> list[dict[str, Any]]:
    """Compare two `driftcheck bench --format json` outputs through their `results` maps."""
    return compare_records(before, after)


def bench_runner(suite: str = "quick", budget_s: float | None = None) -> tuple[BenchRun | None, str]:
    """A function that runs `driftcheck bench` in a child process with env overrides, or None and why not."""
    if importlib.util.find_spec("torch") is None:
        return None, (f"the calibrated benchmark needs torch: pip install torch=={TORCH_PIN} (or your build) "
                      "first, then pip install 'driftcheck[bench]'")
    argv = [sys.executable, "-m", "driftcheck", "bench", "--suite", suite, "--format", "json"]
    if budget_s is not None:
        argv += ["--budget-s", str(budget_s)]

    def run(overrides: dict[str, str | None]) -> Any:
        env = dict(os.environ)
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=_BENCH_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else
                               f"driftcheck bench exited {done.returncode}")
        return json.loads(done.stdout)

    return run, ""


def _verdict(explanation: Explanation, run: BenchRun, regressed: set[str]) -> str:
    revert = explanation.revert or {}
    name, value, current = str(revert.get("name")), revert.get("value"), revert.get("current")
    undo = f"unset {name}" if value is None else f"{name}={value}"
    try:
        # Both runs set the variable explicitly (B's value, then A's), whatever this shell has.
        as_is = run({name: None if current is None else str(current)})
        reverted = run({name: None if value is None else str(value)})
        rows = _compare(as_is, reverted)
    except (RuntimeError, OSError, ValueError, KeyError, TypeError, subprocess.TimeoutExpired) as exc:
        return f"could not rerun the benchmark: {exc}"
    # The reverted run against the run as it is: an improvement there is the cause moving the number back.
    improved = sorted(str(row["name"]) for row in rows if row.get("significant") and not bench_worse(row)
                      and (not regressed or row.get("name") in regressed))
    if improved:
        return f"confirmed: with {undo}, {', '.join(improved)} moved back (significant)"
    return f"not confirmed: with {undo}, no benchmark that fell moved back significantly"


def confirm(result: Explained, run: BenchRun | None, why_not: str, top: int = DEFAULT_TOP) -> dict[int, str]:
    """For the `top` ranked causes: rank -> what reverting it did, or why it cannot be confirmed."""
    regressed = {str(row.get("name")) for row in result.bench if bench_worse(row)}
    out: dict[int, str] = {}
    for explanation in result.explanations[:top]:
        if explanation.revert is None:
            out[explanation.rank] = (f"not confirmable: a {explanation.category} change cannot be reverted "
                                     f"inside one process")
        elif run is None:
            out[explanation.rank] = f"not confirmable: {why_not}"
        else:
            out[explanation.rank] = _verdict(explanation, run, regressed)
    return out
