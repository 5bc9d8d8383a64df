"""Wall time of `driftcheck bench --suite quick` (CPU) against its 30 s target, and of a 3-run record
(`--runs 3`, what `baseline save --bench quick` takes) against its 100 s target.

Prints the wall time of the whole command (interpreter start, torch import, every benchmark), the
floor a user pays anyway (`python -c "import torch"`), the other work on the machine during each run,
and the ratios to the targets.
Run from the repository root: `python benchmarks/bench_quick_time.py [--repeat 3] [--record-runs 3]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 30.0
RECORD_TARGET_S = 100.0


def wall(argv: list[str]) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - started, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record-runs", type=int, default=3, help="runs of the timed record (0: skip it)")
    args = parser.parse_args()
    import_floor = statistics.median(wall([sys.executable, "-c", "import torch"])[0] for _ in range(3))
    times = []
    for _ in range(args.repeat):
        seconds, out = wall([sys.executable, "-m", "driftcheck", "bench", "--suite", "quick", "--device", "cpu",
                             "--format", "json"])
        data = json.loads(out)
        times.append(seconds)
        converged = sum(r["calibration"]["stopped"] == "converged" for r in data["results"].values())
        others = (data.get("disturbance") or {}).get("other_cpu_cores")
        print(f"run: {seconds:.1f} s wall, suite {data['elapsed_s']:.1f} s, {len(data['results'])} results "
              f"({converged} converged to ±1%), skipped {data['skipped'] or 'none'}, threads {data['threads']}, "
              f"other work {others} CPUs")
    worst = max(times)
    print(f"import torch alone: {import_floor:.1f} s")
    verdict = "met" if worst <= TARGET_S else "MISSED"
    print(f"quick CPU suite: median {statistics.median(times):.1f} s, worst {worst:.1f} s over {len(times)} runs; "
          f"target {TARGET_S:.0f} s; worst/target = {worst / TARGET_S:.2f} ({verdict})")
    record_ok = True
    if args.record_runs:
        seconds, out = wall([sys.executable, "-m", "driftcheck", "bench", "--suite", "quick", "--device", "cpu",
                             "--format", "json", "--runs", str(args.record_runs)])
        data = json.loads(out)
        repeats = sum(1 for r in data["run_reports"] if r.get("repeat"))
        record_ok = seconds <= RECORD_TARGET_S
        print(f"{args.record_runs}-run record: {seconds:.1f} s wall ({repeats} disturbed runs repeated); target "
              f"{RECORD_TARGET_S:.0f} s; ratio {seconds / RECORD_TARGET_S:.2f} ({'met' if record_ok else 'MISSED'})")
    return 0 if worst <= TARGET_S and record_ok else 1


if __name__ == "__main__":
    sys.exit(main())
