"""Wall time of a full `driftcheck snapshot` next to the tools a user would otherwise run, in one run.

    python benchmarks/snapshot_speed.py [--python PATH] [--repeat N]

Runs, against the same interpreter (default: this one, which should have torch installed):
  - `driftcheck snapshot` with the full default probe set (no benchmark): once cold (empty hash
    cache, every kernel binary hashed) and N times warm (the cache holds the hashes);
  - `python -m torch.utils.collect_env`;
  - `python -m pip freeze`.
Prints the median wall time of each and the ratios against the warm snapshot, the hash-cache line of
the last warm snapshot (a repeat snapshot should hash nothing), and what each one captured.
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

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Seconds `argv` took, and how it ended (a failure stops the benchmark: its time would mean nothing)."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, cwd=tempfile.gettempdir())
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed, done


def main() -> int:
    # An installed package carries its bytecode. A checkout run with PYTHONDONTWRITEBYTECODE set (as many CI and
    # container images are) recompiles every module changed since its last .pyc on every start, which times the
    # compiler, not driftcheck: compile once, as pip does at install.
    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "driftcheck"), quiet=1)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="the interpreter to describe (needs torch, pip)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each command (default 5)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DRIFTCHECK_HOME": home,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        out = Path(home) / "snapshot.json"
        snapshot = [sys.executable, "-m", "driftcheck", "snapshot", "--python", args.python, "--no-sign",
                    "-o", str(out), "--force"]
        collect_env = [args.python, "-m", "torch.utils.collect_env"]
        pip_freeze = [args.python, "-m", "pip", "freeze"]

        cold, _ = timed(snapshot, env)
        runs: dict[str, list[float]] = {"snapshot (warm cache)": [], "collect_env": [], "pip freeze": []}
        last_stderr = ""
        collect_out = freeze_out = ""
        for _ in range(args.repeat):
            # Interleaved, so a slow moment of the machine falls on all three alike.
            seconds, done = timed(snapshot, env)
            runs["snapshot (warm cache)"].append(seconds)
            last_stderr = done.stderr
            seconds, done = timed(collect_env, env)
            runs["collect_env"].append(seconds)
            collect_out = done.stdout
            seconds, done = timed(pip_freeze, env)
            runs["pip freeze"].append(seconds)
            freeze_out = done.stdout
        document = json.loads(out.read_text())

    medians = {name: statistics.median(times) for name, times in runs.items()}
    warm = medians["snapshot (warm cache)"]
    print(f"interpreter: {args.python}  runs: {args.repeat} (median wall time)")
    print(f"  {'snapshot (cold cache)':<24}{cold:8.3f} s   (once; hashes every kernel binary)")
    for name, seconds in medians.items():
        ratio = seconds / warm
        print(f"  {name:<24}{seconds:8.3f} s   {ratio:6.2f}x the warm snapshot")
    print(f"collect_env / snapshot: {medians['collect_env'] / warm:.2f}  (target >= 8.00, issue 35; 2.00 before it)")
    print(f"pip freeze / snapshot:  {medians['pip freeze'] / warm:.2f}")
    cache_line = next((line for line in last_stderr.splitlines() if line.startswith("kernels:")), "(no kernels line)")
    print(f"last warm snapshot: {cache_line}")
    probes = document["probes"]
    packages = (probes.get("packages", {}).get("data") or {}).get("packages", {})
    kernels = (probes.get("kernels", {}).get("data") or {}).get("files", {})
    statuses = ", ".join(f"{name} {outcome['status']}" for name, outcome in probes.items())
    print(f"captured: snapshot {len(probes)} probes ({statuses}); {len(packages)} packages with build ids, "
          f"{len(kernels)} kernel files with sha256")
    print(f"          collect_env {len(collect_out.splitlines())} lines of text; "
          f"pip freeze {len(freeze_out.splitlines())} name==version lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
