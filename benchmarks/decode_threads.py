"""Does the synthetic CPU decode respond to thread count, as real decoding does? Old shape against new.

Runs `driftcheck bench --only decode` in child processes, alternately with OMP_NUM_THREADS unset and
OMP_NUM_THREADS=1, for the current quick CPU decode shape and the shape it replaced (weights that fit
in a server's last-level cache, matrices too small for the BLAS to split across threads), and prints
tok/s and the ratio 1-thread / all-threads per shape. Real batch-1 decoding reads every weight once
per token from memory, so it slows with fewer threads (less memory parallelism); a ratio near or
above 1 means the benchmark measures thread start-up and cache, not decoding.

Run from the repository root: `python benchmarks/decode_threads.py [--pairs 3] [--budget-s 4]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import json, sys, time, torch
from driftcheck.baselines.calibrate import CalibrationPolicy, wall_timer
from driftcheck.baselines.decode import DecoderShape
from driftcheck.baselines.disturbance import DisturbanceMeter
from driftcheck.baselines.runner import result_json
from driftcheck.baselines.workloads import decode_cases
shape = DecoderShape(**json.loads(sys.argv[1]))
meter = DisturbanceMeter()
with torch.inference_mode():
    case = decode_cases(torch, "cpu", None, wall_timer, shape, "fp32")[0]
    entry = result_json(case, case.run(CalibrationPolicy(budget_s=float(sys.argv[2]))), {}, {}, None)[case.name]
print(json.dumps({"tok_s": entry["median"], "threads": torch.get_num_threads(),
                  "others": meter.report()["other_cpu_cores"]}))
"""
OLD = {"hidden": 512, "layers": 4, "heads": 8, "ffn": 1408, "vocab": 4096, "max_len": 64, "new_tokens": 16}


def measure(shape: dict[str, int], budget_s: float, one_thread: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OMP_NUM_THREADS", None)
    if one_thread:
        env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(shape), str(budget_s)], capture_output=True,
                          text=True, env=env, check=True)
    return dict(json.loads(done.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=3, help="alternating (all threads, 1 thread) pairs per shape")
    parser.add_argument("--budget-s", type=float, default=4.0, help="measurement budget of each run")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from driftcheck.baselines.plans import CPU_DECODE

    new = dict(CPU_DECODE["quick"].__dict__)
    for label, shape in (("replaced shape", OLD), ("current quick shape", new)):
        ratios, others = [], []
        for _ in range(args.pairs):
            full, single = measure(shape, args.budget_s, False), measure(shape, args.budget_s, True)
            ratios.append(single["tok_s"] / full["tok_s"])
            others += [full["others"], single["others"]]
            print(f"{label}: {full['threads']} threads {full['tok_s']:.1f} tok/s, 1 thread {single['tok_s']:.1f} "
                  f"tok/s, ratio {ratios[-1]:.2f} (other work {full['others']:.2f}/{single['others']:.2f} CPUs)",
                  flush=True)
        print(f"{label} {shape}: 1-thread/all-threads median ratio {statistics.median(ratios):.2f} over "
              f"{len(ratios)} pairs; other work median {statistics.median(others):.2f} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
