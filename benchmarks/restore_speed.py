"""`driftcheck restore` of a 100-package environment against a plain `pip install -r` of the same list (issue 32).

A --find-links folder of N small wheels (built here, as tests/wheels.py builds them) is installed into venv A
and snapshotted (its packages and python probes). Then, in rounds, each arm builds a fresh venv of A's list:

- `pip install -r`: `python -m venv --without-pip`, then `pip --python NEW install --no-deps --no-index
  --find-links DIR -r requirements.txt` of A's `name==version` lines: what a user would run without driftcheck;
- `driftcheck restore`: the whole verb through the face (plan, venv, install with uv when present, then the
  verification: a snapshot of the new venv checked against A), `--installer` as chosen.

One untimed round first warms both tools' caches (uv keeps the wheels it unpacked; pip has nothing to
download from a local folder). Prints each arm's median and the ratio restore / pip; the restore must end
"same versions, same binaries" every time or the run stops.

Run from the repository root: `python benchmarks/restore_speed.py [--packages 100] [--rounds 3]
[--installer auto|uv|pip]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import driftcheck  # noqa: E402
from tests.wheels import build_wheel  # noqa: E402


def make_a(work: Path, count: int) -> tuple[Path, list[str], str]:
    """The wheels folder, A's requirement lines and A's snapshot id."""
    wheels = work / "wheels"
    wheels.mkdir()
    lines = []
    for index in range(count):
        name, version = f"bench_pkg_{index:03d}", f"1.{index}.0"
        build_wheel(wheels, name, version, f"VALUE = {index}\n" + "# padding\n" * 200)
        lines.append(f"{name}=={version}")
    venv = work / "a"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-deps", "--no-index", "--find-links", str(wheels), *lines],
                   check=True, timeout=600)
    taken = driftcheck.take_snapshot(python=str(venv / "bin" / "python"), probes=("packages", "python"))
    return wheels, lines, taken.id


def pip_arm(work: Path, wheels: Path, lines: list[str], name: str) -> float:
    """Seconds of a fresh venv plus `pip install -r` of A's list."""
    listing = work / "requirements.txt"
    listing.write_text("\n".join(lines) + "\n", "utf-8")
    venv = work / name
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-deps", "--no-index", "--find-links", str(wheels),
                    "-r", str(listing)], check=True, timeout=600)
    return time.perf_counter() - began


def restore_arm(work: Path, wheels: Path, snapshot: str, name: str, installer: str) -> tuple[float, str]:
    """Seconds of `driftcheck restore` (verification included) and the installer it used."""
    began = time.perf_counter()
    result = driftcheck.restore(snapshot, work / name, installer=installer, no_index=True,
                                find_links=(str(wheels),))
    seconds = time.perf_counter() - began
    if not result.reproduced or result.check is None:
        raise SystemExit(f"restore did not reproduce A: {result.check.verdict() if result.check else 'no check'}")
    return seconds, result.installer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--installer", choices=("auto", "uv", "pip"), default="auto")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="driftcheck-restore-bench-") as scratch:
        work = Path(scratch)
        os.environ.setdefault("DRIFTCHECK_HOME", str(work / "home"))
        wheels, lines, snapshot = make_a(work, args.packages)
        pip_arm(work, wheels, lines, "warm-pip")
        restore_arm(work, wheels, snapshot, "warm-restore", args.installer)
        pip_times, restore_times, used = [], [], ""
        for round_index in range(args.rounds):
            pip_times.append(pip_arm(work, wheels, lines, f"pip-{round_index}"))
            seconds, used = restore_arm(work, wheels, snapshot, f"restore-{round_index}", args.installer)
            restore_times.append(seconds)
            for name in (f"pip-{round_index}", f"restore-{round_index}"):
                shutil.rmtree(work / name, ignore_errors=True)
        pip_median, restore_median = statistics.median(pip_times), statistics.median(restore_times)
        print(f"{args.packages} packages, {args.rounds} rounds, warm caches")
        print(f"  pip install -r (venv + install):               median {pip_median:.2f} s  "
              f"{', '.join(f'{t:.2f}' for t in pip_times)}")
        print(f"  driftcheck restore ({used}, verification included): median {restore_median:.2f} s  "
              f"{', '.join(f'{t:.2f}' for t in restore_times)}")
        print(f"  ratio restore / pip: {restore_median / pip_median:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
