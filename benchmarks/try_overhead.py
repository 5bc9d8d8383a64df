"""The cost of `driftcheck try` to the command it measures: target <= 2 % of the command's time (issue 20).

The same command (a busy loop printing its own time, and a burst of output lines to be scanned) is run
directly (`subprocess.run`, output to a pipe) and through the run path of `try` (own process group, output
read and scanned for figures as it comes), interleaved in random order, and the medians compared: the wall
time of a run, and the figure the command printed (what a slower command would show).
Run from the repository root: `python benchmarks/try_overhead.py [--runs 20] [--seconds 0.5] [--lines 20000]`.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.runs.metrics import user_pattern  # noqa: E402
from driftcheck.runs.trial import _run_command  # noqa: E402

WORK = user_pattern("work=work: ([0-9.]+) Miter")  # what `try --metric` would read

COMMAND = """
import sys, time
seconds, lines = float(sys.argv[1]), int(sys.argv[2])
for i in range(lines):
    print(f"step {i}: loss 0.{i % 97:02d} lr 3e-4")
start = time.perf_counter()
x = 0
while time.perf_counter() - start < seconds:
    x += 1
print(f"work: {x / 1e6:.3f} Miter")
print(f"loop: {(time.perf_counter() - start) * 1000:.3f} ms")
"""


def direct(argv: list[str]) -> tuple[float, float]:
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - began
    work = next(float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("work:"))
    return wall, work


def through_try(argv: list[str]) -> tuple[float, float]:
    output = _run_command(argv, dict(os.environ), (WORK,), None)
    return output.duration_s, next(m.value for m in output.metrics if m.name == "work")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=0.5, help="the busy loop's length")
    parser.add_argument("--lines", type=int, default=20000, help="output lines printed before the loop")
    args = parser.parse_args()
    argv = [sys.executable, "-c", COMMAND, str(args.seconds), str(args.lines)]
    rng = random.Random(1)
    results: dict[str, list[tuple[float, float]]] = {"direct": [], "try": []}
    for _ in range(args.runs):
        for way in rng.sample(["direct", "try"], 2):
            results[way].append(direct(argv) if way == "direct" else through_try(argv))
    for way, rows in results.items():
        print(f"{way:>6}: median wall {statistics.median(r[0] for r in rows):.4f} s, "
              f"median work {statistics.median(r[1] for r in rows):.3f} Miter")
    wall_ratio = statistics.median(r[0] for r in results["try"]) / statistics.median(r[0] for r in results["direct"])
    work_ratio = statistics.median(r[1] for r in results["try"]) / statistics.median(r[1] for r in results["direct"])
    print(f"wall time through try / direct: {wall_ratio:.4f} ({(wall_ratio - 1) * 100:+.2f} %)")
    print(f"work done in the fixed time, through try / direct: {work_ratio:.4f} ({(work_ratio - 1) * 100:+.2f} %) "
          f"(target: within 2 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
