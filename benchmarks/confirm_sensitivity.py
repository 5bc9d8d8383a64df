"""How often `driftcheck try` is right, with a busy process on one core the whole time.

Targets (issue 20): identical variants (A = B) called different in <= 5 % of >= 40 trials; a 10 % slowdown
called slower in >= 95 % of >= 20 trials. Also printed: the median pairs and seconds per decided trial.

The slowdown is a real package: two wheels of `dcwork` are built here (1.0, and 1.1 which does 10 % more
work per call), each installed with pip into a venv of its own; the trial's variants are the two
interpreters (`--a-python` / `--b-python`), the command `python -c "import dcwork; dcwork.main()"`, which
prints its own `work: N ms`. A = B uses the 1.0 venv on both sides.
Take the figures alone on the machine. Run from the repository root:
`python benchmarks/confirm_sensitivity.py [--same 40] [--slow 20] [--max-pairs 24] [--work 600000]`
(a smoke run: `--same 2 --slow 2 --max-pairs 8 --work 50000`).
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.runs.trial import TrialPlan, TrialResult, Variant, run_trial  # noqa: E402
from driftcheck.stats.comparison import plan_looks  # noqa: E402
from tests import wheels  # noqa: E402  (the wheels and venvs the tests build too)

MODULE = '''
import time
WORK = {work}


def main():
    start = time.perf_counter()
    x = 0
    for i in range(WORK):
        x += i * i % 7
    print(f"work: {{(time.perf_counter() - start) * 1000:.3f}} ms")
'''


def build_wheel(directory: Path, version: str, work: int) -> Path:
    """A pure-Python wheel of `dcwork` `version` whose main() runs `work` iterations (PEP 427 layout)."""
    return wheels.build_wheel(directory, "dcwork", version, MODULE.format(work=work))


def venv_with(directory: Path, wheel: Path) -> str:
    """A fresh venv with `wheel` installed by pip; returns its interpreter."""
    return str(wheels.venv_with(directory, [wheel]))


def trial(a: str, b: str, max_pairs: int, seed: int) -> TrialResult:
    plan = TrialPlan(command=("python", "-c", "import dcwork; dcwork.main()"),
                     variants=(Variant("A", python=a), Variant("B", python=b)), metric="work",
                     max_pairs=max_pairs, seed=seed, record=False)
    return run_trial(plan)


def series(label: str, count: int, a: str, b: str, max_pairs: int, seed: int) -> list[TrialResult]:
    results = []
    for index in range(count):
        result = trial(a, b, max_pairs, seed + index)
        results.append(result)
        comparison = result.comparisons["B"]
        print(f"  {label} {index + 1}/{count}: {result.verdict('B')}, {comparison.effect_pct:+.1f} %, "
              f"{comparison.n} pairs, {result.elapsed_s:.1f} s", flush=True)
    return results


def decided_figures(results: list[TrialResult]) -> str:
    decided = [r for r in results if r.comparisons["B"].decided]
    if not decided:
        return "none decided"
    pairs = statistics.median(r.comparisons["B"].n for r in decided)
    seconds = statistics.median(r.elapsed_s for r in decided)
    return f"median {pairs:g} pairs and {seconds:.1f} s per decided trial"


def pair_spread(results: list[TrialResult]) -> str:
    """The median, over trials, of the standard deviation of the per-pair ln(B/A): how noisy the machine was
    (figures taken under different loads compare only at a like spread)."""
    spreads = []
    for result in results:
        ratios = [math.log(b / a) for a, b in zip(result.values("A"), result.values("B"), strict=True)]
        if len(ratios) >= 2:
            spreads.append(statistics.stdev(ratios))
    return f"{statistics.median(spreads):.3f}" if spreads else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--same", type=int, default=40, help="A = B trials (target: >= 40)")
    parser.add_argument("--slow", type=int, default=20, help="10 %% slowdown trials (target: >= 20)")
    parser.add_argument("--max-pairs", type=int, default=24)
    parser.add_argument("--work", type=int, default=600000, help="iterations of dcwork 1.0 per run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-busy", action="store_true", help="leave out the busy process (not the target setup)")
    args = parser.parse_args()
    looks = plan_looks(args.max_pairs)
    print(f"plan: {args.max_pairs} pairs at most, looks at "
          + ", ".join(f"{n} (p <= {looks.level(n) or 0:.3g})" for n in looks.looks) + f"; {looks.rule}", flush=True)
    with tempfile.TemporaryDirectory(prefix="dc-confirm-") as scratch:
        base = Path(scratch)
        old = venv_with(base / "old", build_wheel(base, "1.0", args.work))
        new = venv_with(base / "new", build_wheel(base, "1.1", args.work * 11 // 10))
        busy = None if args.no_busy else subprocess.Popen([sys.executable, "-c", "while True: pass"])
        started = time.monotonic()
        try:
            same = series("A = B", args.same, old, old, args.max_pairs, args.seed)
            slow = series("+10 %", args.slow, old, new, args.max_pairs, args.seed + 10_000)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    false_rate = sum(r.comparisons["B"].decided for r in same) / max(1, len(same))
    caught = sum(r.verdict("B") == "slower" for r in slow) / max(1, len(slow))
    print(f"busy process on one core: {'no' if args.no_busy else 'yes'}; {time.monotonic() - started:.0f} s in all; "
          f"per-pair spread of ln(B/A) (median sd over the A = B trials): {pair_spread(same)}")
    print(f"A = B called different: {false_rate:.1%} of {len(same)} (target <= 5 % of >= 40): "
          f"{'met' if false_rate <= 0.05 and len(same) >= 40 else 'NOT met'}")
    print(f"10 % slowdown called slower: {caught:.1%} of {len(slow)} (target >= 95 % of >= 20): "
          f"{'met' if caught >= 0.95 and len(slow) >= 20 else 'NOT met'}; {decided_figures(slow)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
