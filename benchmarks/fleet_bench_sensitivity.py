"""How often `driftcheck fleet --bench` names a slowed host, and how often it names one it should not, by runs per
host: resampled from real per-run figures.

The corpus (tests/data/fleet_bench/runs/, its SOURCE says how it was taken) holds every run of real fleet-bench
tries over the test's sshd hosts on the 2-core VM, some hosts with OMP_NUM_THREADS=1, each run the figures of
the quick suite's benchmarks in one process (kept together: a run that stalled stalls all its benchmarks). One
simulated fleet is eight hosts, each given `runs` runs drawn without replacement from a pool: seven from the
unchanged hosts' runs and one, the slowed host, from the one-thread hosts' runs. It is judged by the code the
command uses (`driftcheck.analysis.fleet_bench.judge_fleet`, disturbance flags as recorded), and counted:

- named: the slowed host is named `slower`;
- wrong: another host of that fleet is named (slower or faster);
- unchanged fleet: eight hosts all drawn from the unchanged runs; some host is named.

Three pools: `quiet`, the runs in which no benchmark was flagged disturbed by other work (a stall the flag
missed stays in); `all`, every run (where the machine was busy the one-thread host is often held by the
disturbance, as in the real test); `unflagged`, every run with its flags taken out, as though other work had
stalled runs unseen: what a host's figure must withstand where the flag misses. Under load a one-thread host is
not slow (the others' two-thread GEMMs wait for their busy core): each pool again as `+half`, the slowed host
made of unchanged runs with the GEMM figure halved (-45 to -48% on the quiet VM, README), tells how often a
known loss is found among those runs' real noise. Hosts are processes on one machine, so drawing runs from one
pool across tries stands for machines whose differences are the run noise and the load of the moment; a real
fleet's machines differ more.

`--runs 2 3` compares two runs a host with three, each fleet judged as `judge_fleet` judges it (a host's figure
the median of its runs: of two, their mean). Fleets are drawn from about a hundred runs, so a count moves by
more than its binomial spread when the corpus changes: read differences of a few tens in 1000 as none.

    python benchmarks/fleet_bench_sensitivity.py                 # 1000 fleets a pool, 2 and 3 runs per host
    python benchmarks/fleet_bench_sensitivity.py --runs 2 3 4 --fleets 300 --seed 7
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.analysis.fleet_bench import judge_fleet  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "fleet_bench" / "runs" / "runs.json"
HOSTS = 8
SLOWED = "host4"
GEMM = "gemm_fp32_1024_gflops"

Run = dict[str, dict[str, Any]]


def quiet(run: Run) -> bool:
    """Whether no benchmark of this run was flagged disturbed by other work."""
    return not any(entry.get("disturbed") for entry in run.values())


@dataclass(frozen=True)
class Pool:
    """The runs a simulated fleet is drawn from: the unchanged hosts' and the slowed host's (None: the slowed host's
    runs are unchanged runs with the GEMM figure halved, as OMP_NUM_THREADS=1 leaves it on the quiet VM)."""

    unchanged: list[Run]
    slowed: list[Run] | None


def pools(corpus: dict[str, Any]) -> dict[str, Pool]:
    """The pools by name: `quiet`, the runs not flagged disturbed; `all`; `unflagged`, all with their flags taken
    out; and each with `+half`, its unchanged runs with the GEMM halved on the slowed host."""
    hosts = [host for t in corpus["tries"] for host in t["hosts"]]
    unchanged = [run for host in hosts if not host["slowed"] for run in host["runs"]]
    slowed = [run for host in hosts if host["slowed"] for run in host["runs"]]
    out = {"quiet": Pool([run for run in unchanged if quiet(run)], [run for run in slowed if quiet(run)]),
           "all": Pool(unchanged, slowed),
           "unflagged": Pool([unflagged(run) for run in unchanged], [unflagged(run) for run in slowed])}
    return {**out, **{f"{name}+half": Pool(pool.unchanged, None) for name, pool in out.items()}}


def unflagged(run: Run) -> Run:
    """The run with its disturbance flags taken out: the same figures, as though the flag had missed every one."""
    return {name: {key: value for key, value in entry.items() if key not in ("disturbed", "taken")}
            for name, entry in run.items()}


def halved(run: Run) -> Run:
    """The run with its GEMM figure halved (GFLOP/s: higher is better)."""
    return {name: {**entry, "median": entry["median"] / 2} if name == GEMM else entry for name, entry in run.items()}


def record(runs: Sequence[Run], benchmarks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A host's `bench` probe data made of these runs: per benchmark its runs and their median."""
    results = {}
    for name, meta in benchmarks.items():
        taken = [run[name] for run in runs if name in run]
        if taken:
            results[name] = {**meta, "median": statistics.median(r["median"] for r in taken), "runs": taken}
    return {"suite": "quick", "device": "cpu", "runs": len(runs), "results": results}


def fleet(rng: random.Random, pool: Pool, runs: int, benchmarks: dict[str, dict[str, Any]],
          slowed: bool = True) -> dict[str, dict[str, Any]]:
    """Eight hosts' records, no run drawn twice: host4 slowed (when `slowed`), the others unchanged."""
    drawn = rng.sample(pool.unchanged, runs * (HOSTS - 1 if slowed and pool.slowed is not None else HOSTS))
    records = {}
    for i in range(HOSTS):
        host = f"host{i + 1}"
        if slowed and host == SLOWED:
            mine = (rng.sample(pool.slowed, runs) if pool.slowed is not None
                    else [halved(drawn.pop()) for _ in range(runs)])
        else:
            mine = [drawn.pop() for _ in range(runs)]
        records[host] = record(mine, benchmarks)
    return records


def enough(pool: Pool, runs: int) -> bool:
    """Whether the pool holds the runs of a fleet without drawing one twice."""
    return len(pool.unchanged) >= HOSTS * runs and (pool.slowed is None or len(pool.slowed) >= runs)


def rates(pool: Pool, runs: int, fleets: int, seed: int, benchmarks: dict[str, dict[str, Any]]) -> tuple[int, int, int]:
    """Of `fleets` simulated fleets: the slowed host named slower, another host named beside it, and (as many
    fleets again, all unchanged) some host named."""
    rng = random.Random(seed)
    named = wrong = false = 0
    for _ in range(fleets):
        judged = judge_fleet(fleet(rng, pool, runs, benchmarks))
        named += judged.hosts[SLOWED].verdict == "slower"
        wrong += any(host != SLOWED for host in judged.outliers)
        false += bool(judge_fleet(fleet(rng, pool, runs, benchmarks, slowed=False)).outliers)
    return named, wrong, false


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--runs", type=int, nargs="+", default=[2, 3], help="runs per host to compare")
    parser.add_argument("--fleets", type=int, default=1000, help="simulated fleets per pool and run count")
    parser.add_argument("--seed", type=int, default=36)
    args = parser.parse_args(argv)
    corpus = json.loads(args.corpus.read_text("utf-8"))
    benchmarks = corpus["benchmarks"]
    print(f"{len(corpus['tries'])} recorded tries, {HOSTS} hosts a fleet, {args.fleets} fleets "
          "a pool and run count; each host judged at 1%/8")
    print(f"{'pool':14} {'runs':>4} {'unchanged runs':>14} {'slowed runs':>11} {'named':>7} {'wrong':>7} "
          f"{'unchanged fleet names one':>25}")
    started = time.perf_counter()
    for name, pool in pools(corpus).items():
        slowed = "(halved)" if pool.slowed is None else str(len(pool.slowed))
        for runs in args.runs:
            if not enough(pool, runs):
                print(f"{name:14} {runs:>4} {len(pool.unchanged):>14} {slowed:>11}   too few runs for a fleet")
                continue
            named, wrong, false = rates(pool, runs, args.fleets, args.seed, benchmarks)
            print(f"{name:14} {runs:>4} {len(pool.unchanged):>14} {slowed:>11} {named:>7} {wrong:>7} {false:>25}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
