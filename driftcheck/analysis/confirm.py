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
from typing import Any

from driftcheck.analysis.explain.bench import bench_worse
from driftcheck.analysis.explain.model import Explained, Explanation
from driftcheck.baselines.compare import compare_records
from driftcheck.baselines.deps import TORCH_PIN

BenchRun = Callable[[dict[str, str | None]], Any]
_BENCH_TIMEOUT_S = 600.0


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


def confirm(result: Explained, run: BenchRun | None, why_not: str, top: int = 3) -> dict[int, str]:
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
