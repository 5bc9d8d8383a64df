"""What watching a benchmark costs it: a CPU-bound command run directly, and under `driftcheck run`.

`driftcheck run` samples the GPUs and CPUs once a second in threads of its own process while the
command runs. This measures the command's own wall time both ways (under driftcheck, the duration
its run record holds, which excludes the snapshots before and after) and prints the ratio; 1.00 means
the watching costs nothing measurable. Also prints the fixed cost a user pays per run for the two
cheap snapshots (whole `driftcheck run` wall time minus the command's).
Run from the repository root: `python benchmarks/run_overhead.py [--repeat 5] [--work 30000000]`.
On a machine shared with other work the ratio moves by a few percent either way: repeat and compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=int, default=30_000_000, help="loop iterations of the command")
    parser.add_argument("--interval", type=float, default=1.0, help="driftcheck run --interval")
    args = parser.parse_args()
    command = [sys.executable, "-c", f"s = 0\nfor i in range({args.work}): s += i\nprint('done', s)"]
    home = tempfile.mkdtemp(prefix="driftcheck-overhead-")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DRIFTCHECK_HOME": home}
    direct, watched, whole = [], [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        direct.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "driftcheck", "run", "-q", "--interval", str(args.interval), "--",
                        *command], capture_output=True, check=True, env=env)
        whole.append(time.perf_counter() - started)
        listed = subprocess.run([sys.executable, "-m", "driftcheck", "runs", "--format", "json", "-n", "1"],
                                capture_output=True, text=True, check=True, env=env)
        watched.append(float(json.loads(listed.stdout)[0]["duration_s"]))
    d, w, total = statistics.median(direct), statistics.median(watched), statistics.median(whole)
    print(f"command alone:            median {d:.3f} s over {args.repeat} runs")
    print(f"command under run:        median {w:.3f} s (sampling every {args.interval:g} s)")
    print(f"ratio (watched / alone):  {w / d:.3f}")
    print(f"fixed cost per run:       {total - w:.2f} s (two cheap snapshots, store writes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
