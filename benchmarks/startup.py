"""Start-up cost of the command line against its targets: `driftcheck --version` at most 2x and `driftcheck
key show` at most 3x a bare `python -c pass`.

Runs the three commands interleaved (one of each per round, so load on the machine hits all three
alike), takes the median wall time of each over the rounds, and prints the ratios to `python -c pass`.
Also counts the driftcheck modules (and all modules) that `key show` loads, and names the heavy
third-party libraries it pulled in, if any. DRIFTCHECK_HOME points at a temporary directory, so the
key is created there once (before timing) and the user's own is never touched.
Run from the repository root: `python benchmarks/startup.py [--rounds 15]`.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIOS = {"driftcheck --version": 2.0, "driftcheck key show": 3.0}
HEAVY = ("deepdiff", "yaml", "psutil", "paramiko", "driftcheck.analysis", "driftcheck.baselines", "driftcheck.api")

# Runs `key show` in-process after the interpreter's own start-up, then reports what it loaded.
COUNT_CHILD = """
import json, sys, io, contextlib
from driftcheck.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["key", "show"])
mods = sorted(sys.modules)
print(json.dumps({"driftcheck": [m for m in mods if m == "driftcheck" or m.startswith("driftcheck.")],
                  "all": mods}))
"""


def _wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    """Measure, print the table, and return 0 when both commands are within the target ratio."""
    # An installed package carries its bytecode. A checkout run with PYTHONDONTWRITEBYTECODE set (as many CI and
    # container images are) recompiles every module changed since its last .pyc on every start, which times the
    # compiler, not driftcheck: compile once, as pip does at install.
    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "driftcheck"), quiet=1)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="interleaved repetitions (median of these; >= 10)")
    args = parser.parse_args()
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "driftcheck --version": [py, "-m", "driftcheck", "--version"],
        "driftcheck key show": [py, "-m", "driftcheck", "key", "show"],
    }
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "DRIFTCHECK_HOME": home}
        _wall(commands["driftcheck key show"], env)  # creates the key, outside the timing
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(max(args.rounds, 10)):
            for name, argv in commands.items():
                times[name].append(_wall(argv, env))
        loaded = json.loads(subprocess.run([py, "-c", COUNT_CHILD], env=env, check=True, capture_output=True,
                                           text=True).stdout)
    floor = statistics.median(times["python -c pass"])
    print(f"{'command':<24} {'median':>9} {'ratio':>7} {'target':>7}   (x python -c pass; "
          f"{len(times['python -c pass'])} interleaved rounds)")
    within = True
    for name, samples in times.items():
        median = statistics.median(samples)
        ratio = median / floor
        target = TARGET_RATIOS.get(name)
        within = within and (target is None or ratio <= target)
        print(f"{name:<24} {median * 1000:>7.1f}ms {ratio:>6.2f}x " + (f"{target:>6g}x" if target else ""))
    heavy = sorted({h for h in HEAVY for m in loaded["all"] if m == h or m.startswith(h + ".")})
    print(f"key show loads {len(loaded['driftcheck'])} driftcheck modules ({len(loaded['all'])} modules in all)"
          + (f"; heavy: {', '.join(heavy)}" if heavy else "; none of the heavy ones"))
    print("within target" if within else "OVER TARGET")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
