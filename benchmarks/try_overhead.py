"""The cost of `driftcheck try` to the command it measures: target <= 2 % of the command's time (issue 20).

The same command (a burst of output lines to be scanned, then a busy loop printing how much it did and
its own time) is run in rounds of three arms in random order: directly (`subprocess.run`, output to a
pipe), directly again (an A/A arm: the noise floor of this machine), and through the run path of `try`
(own process group, output kept and scanned for figures). Per round, the log ratio of each arm to the
direct one; printed with the Hodges-Lehmann estimate and its 95 % interval (`driftcheck.stats.
comparison`, the statistics `try` itself uses):

- wall time of a run, from its start until its figure is read: what the command costs the user's time
  through try;
- work done in the fixed loop time: what a slower command would show. On a shared VM one run's loop
  speed wanders by tens of percent, so compare its interval with the A/A arm's before reading it;
- try's own CPU time per run (reader thread, waiting, scanning: this process's CPU time around the run)
  as a share of the command's wall time: the machinery's cost, which the noise of the command does not
  hide.

Run from the repository root: `python benchmarks/try_overhead.py [--rounds 30] [--seconds 0.5]
[--lines 20000]`.
"""

from __future__ import annotations

import argparse
import math
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
from driftcheck.stats.comparison import hodges_lehmann, percent  # noqa: E402

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
ARMS = ("direct", "direct again", "try")


def direct(argv: list[str]) -> tuple[float, float, float]:
    """(wall s, work Miter, this process's CPU s) of one direct run."""
    cpu, began = time.process_time(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall, own = time.perf_counter() - began, time.process_time() - cpu
    work = next(float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("work:"))
    return wall, work, own


def through_try(argv: list[str]) -> tuple[float, float, float]:
    """(wall s, work Miter, this process's CPU s) of one run through try's run path."""
    cpu, began = time.process_time(), time.perf_counter()
    output = _run_command(argv, dict(os.environ), (WORK,), None)
    wall, own = time.perf_counter() - began, time.process_time() - cpu  # the figure read too, as for direct
    return wall, next(m.value for m in output.metrics if m.name == "work"), own


def interval(arm: list[float], reference: list[float]) -> str:
    """`+x.x % (95 % CI a..b)` of arm against reference, paired by round."""
    ratios = [math.log(x / r) for x, r in zip(arm, reference, strict=True)]
    estimate, low, high = hodges_lehmann(ratios, 0.05)
    return f"{percent(estimate):+.2f} % (95 % CI {percent(low):+.2f}..{percent(high):+.2f} %)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=0.5, help="the busy loop's length")
    parser.add_argument("--lines", type=int, default=20000, help="output lines printed before the loop")
    args = parser.parse_args()
    if args.rounds < 6 or args.seconds <= 0 or args.lines < 0:
        print("try_overhead: --rounds must be at least 6, --seconds positive, --lines not negative", file=sys.stderr)
        return 2
    argv = [sys.executable, "-c", COMMAND, str(args.seconds), str(args.lines)]
    rng = random.Random(1)
    rows: dict[str, list[tuple[float, float, float]]] = {arm: [] for arm in ARMS}
    for round_no in range(args.rounds):
        for arm in rng.sample(ARMS, len(ARMS)):
            rows[arm].append(through_try(argv) if arm == "try" else direct(argv))
        print(f"round {round_no + 1}/{args.rounds}", file=sys.stderr, flush=True)
    for arm in ARMS:
        print(f"{arm:>12}: median wall {statistics.median(r[0] for r in rows[arm]):.4f} s, median work "
              f"{statistics.median(r[1] for r in rows[arm]):.3f} Miter, this process's CPU "
              f"{statistics.median(r[2] for r in rows[arm]) * 1000:.1f} ms a run")
    for index, what in ((0, "wall time"), (1, "work done in the fixed time")):
        reference = [r[index] for r in rows["direct"]]
        print(f"{what}, try vs direct: {interval([r[index] for r in rows['try']], reference)}; "
              f"A/A (direct again vs direct): {interval([r[index] for r in rows['direct again']], reference)}")
    share = statistics.median(r[2] / r[0] for r in rows["try"])
    direct_share = statistics.median(r[2] / r[0] for r in rows["direct"])
    extra = statistics.median((t[2] - d[2]) / d[0] for t, d in zip(rows["try"], rows["direct"], strict=True))
    print(f"this process's CPU time per run, as a share of the command's wall time: try {share * 100:.2f} %, "
          f"subprocess.run {direct_share * 100:.2f} % (reading the output as it comes, a wake-up per write); "
          f"try's extra: {extra * 100:+.2f} % (median of the rounds)")
    print("target: try's wall time and CPU time within 2 % of the direct run's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
