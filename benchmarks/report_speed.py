"""How long `driftcheck report` takes to write report.md for a large snapshot, and how long it is, next
to `python -m torch.utils.collect_env`, the report users otherwise paste into an issue.

The snapshot: benchmarks/diff_speed.py's A (8 recorded H100s, 600 packages with 2,400 compiled files, 300
environment variables). Target: Markdown under 65,536 characters (GitHub's comment limit) in under 1 s.

    python benchmarks/report_speed.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from diff_speed import large_document  # noqa: E402

from driftcheck.reports.markdown import GITHUB_LIMIT  # noqa: E402
from driftcheck.reports.report import write_report  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402


def _time_report(snapshot: Snapshot, repeat: int) -> tuple[float, int, bool]:
    times, length, cut = [], 0, False
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            files = write_report(snapshot, Path(tmp) / "rep")
            times.append(time.perf_counter() - start)
            length, cut = files.length, files.cut
    return statistics.median(times), length, cut


def _time_collect_env() -> float | None:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True, check=False)
    return time.perf_counter() - start if done.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    document = large_document()
    snapshot = Snapshot(document, "large")
    seconds, length, cut = _time_report(snapshot, args.repeat)
    n_packages = len(document["probes"]["packages"]["data"]["packages"])
    n_gpus = len(document["probes"]["gpu"]["data"]["gpus"])
    print(f"snapshot: {n_gpus} GPUs, {n_packages} packages, "
          f"{len(document['probes']['kernels']['data']['files'])} compiled files")
    print(f"driftcheck report: {seconds:.3f} s (median of {args.repeat}), report.md {length:,} characters "
          f"(limit {GITHUB_LIMIT:,}; sections cut: {'yes' if cut else 'no'}) -> "
          f"{'OK' if seconds < 1 and length < GITHUB_LIMIT else 'MISSED'} against < 1 s and < {GITHUB_LIMIT:,}")
    other = _time_collect_env()
    if other is None:
        print("python -m torch.utils.collect_env: not available in this interpreter (no torch)")
    else:
        print(f"python -m torch.utils.collect_env: {other:.3f} s -> report is {other / seconds:.1f}x faster "
              "(and carries the signed snapshot beside it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
