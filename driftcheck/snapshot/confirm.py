"""`explain --confirm`: rerun the calibrated benchmark with a suspect reverted, per process.

Only what one process can undo for itself is confirmable (an environment variable); a driver, a
clock or a cable is not, and says so. The benchmark runs here, in a child process, so this
confirms a cause on *this* machine in its current state (B), with A's value put back.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from driftcheck.snapshot.explain import Explained, Explanation, bench_worse

BenchRun = Callable[[dict[str, str | None]], Any]
_BENCH_TIMEOUT_S = 600.0


def _compare(before: Any, after: Any) -> list[dict[str, Any]]:
    compare = importlib.import_module("driftcheck.baselines.compare").compare_results
    try:
        return list(compare(before, after))
    except (KeyError, TypeError, ValueError):
        return list(compare(before["results"], after["results"]))


def bench_runner(suite: str = "quick") -> tuple[BenchRun | None, str]:
    """A function that runs `driftcheck bench` in a child process with env overrides, or None and why not."""
    if importlib.util.find_spec("driftcheck.baselines") is None or \
            importlib.util.find_spec("driftcheck.baselines.compare") is None:
        return None, "the calibrated benchmark (driftcheck.baselines) is not part of this driftcheck"

    def run(overrides: dict[str, str | None]) -> Any:
        env = dict(os.environ)
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        done = subprocess.run([sys.executable, "-m", "driftcheck", "bench", "--suite", suite, "--format", "json"],
                              capture_output=True, text=True, env=env, timeout=_BENCH_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else
                               f"driftcheck bench exited {done.returncode}")
        return json.loads(done.stdout)

    return run, ""


def _verdict(explanation: Explanation, run: BenchRun, regressed: set[str]) -> str:
    revert = explanation.revert or {}
    name, value = str(revert.get("name")), revert.get("value")
    undo = f"unset {name}" if value is None else f"{name}={value}"
    try:
        as_is = run({})
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
