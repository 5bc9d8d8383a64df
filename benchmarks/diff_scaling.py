"""Is `driftcheck diff` linear in the number of facts? The time per 10,000 facts at 10^4, 10^5 and 10^6
environment variables, and the time of importing an N x N `nvidia-smi topo -m` matrix.

A is tests/data/pairs/base.json with N environment variables; B changes every 10th value, removes every
100th and adds N/100 new ones (so the report itself grows with N, as it does on a real machine whose
environment was rewritten). Each size runs what `driftcheck diff A B --format json` runs: load both files,
the structural diff, explain, the JSON report. The target (issue 19): 10^6 within 10x the time of 10^5.

    python benchmarks/diff_scaling.py [--sizes 10000,100000,1000000] [--topo 16,128,256,3000]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.analysis.diff import diff_snapshots  # noqa: E402
from driftcheck.analysis.explain import explain  # noqa: E402
from driftcheck.analysis.render import diff_text  # noqa: E402
from driftcheck.snapshot.model import read_snapshot_file  # noqa: E402


def documents(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A and B with `n` environment variables each (B: 10% changed, 1% removed, 1% new)."""
    base: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "pairs" / "base.json").read_text("utf-8"))
    base.pop("signature", None)
    a = copy.deepcopy(base)
    variables = {f"BENCH_VAR_{i:07d}": f"value-{i}" for i in range(n)}
    a["probes"]["env"]["data"]["vars"] = variables
    b = copy.deepcopy(a)
    changed = b["probes"]["env"]["data"]["vars"]
    for i in range(0, n, 10):
        changed[f"BENCH_VAR_{i:07d}"] = f"other-{i}"
    for i in range(5, n, 100):
        del changed[f"BENCH_VAR_{i:07d}"]
    for i in range(n // 100):
        changed[f"BENCH_NEW_{i:07d}"] = "new"
    return a, b


def time_diff(n: int, directory: Path) -> float:
    """Seconds for load + diff + explain + both reports of two snapshots of `n` variables."""
    a, b = documents(n)
    paths = []
    for name, document in (("a", a), ("b", b)):
        path = directory / f"{name}{n}.json"
        path.write_text(json.dumps(document), "utf-8")
        paths.append(path)
    start = time.perf_counter()
    first, second = (read_snapshot_file(p) for p in paths)
    diff = diff_snapshots(first, second)
    explained = explain(diff)
    json.dumps(explained.to_json(), indent=2, sort_keys=True, ensure_ascii=False)
    evidence = explained.evidence_paths()
    diff_text(diff, False, also=[c for c in diff.readings if c.path in evidence],
              ranked=[e.category for e in explained.explanations])
    return time.perf_counter() - start


def topo_matrix(n: int) -> str:
    """An `nvidia-smi topo -m` matrix of `n` GPUs (NV18 between all), with the CPU/NUMA affinity columns."""
    names = [f"GPU{i}" for i in range(n)]
    lines = ["\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i, name in enumerate(names):
        cells = ["X" if j == i else "NV18" for j in range(n)]
        lines.append(name + "\t" + "\t".join(cells) + "\t0-55\t0\t\tN/A")
    lines += ["", "Legend:", "", "  X    = Self", "  NV#  = Connection traversing a bonded set of # NVLinks"]
    return "\n".join(lines) + "\n"


def time_topo(n: int, directory: Path) -> tuple[float, str]:
    """Seconds to import an n x n topology matrix as a snapshot (what `driftcheck import` does), and the
    outcome: "imported", or the error of a matrix larger than any machine's (driftcheck.nvidia.topo)."""
    from driftcheck.errors import DriftcheckError
    from driftcheck.reports.importer import import_snapshot

    path = directory / f"topo{n}.txt"
    path.write_text(topo_matrix(n), "utf-8")
    start = time.perf_counter()
    try:
        import_snapshot([path])
        outcome = "imported"
    except DriftcheckError as exc:
        outcome = f"refused: {str(exc).rsplit(' but ', 1)[-1]}"
    return time.perf_counter() - start, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--topo", default="16,128,256,3000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        times = {}
        for n in (int(s) for s in args.sizes.split(",") if s):
            times[n] = time_diff(n, Path(tmp))
            print(f"diff {n:>9,} env vars: {times[n]:7.2f} s, {times[n] / n * 10_000 * 1000:6.1f} ms per 10,000 facts")
        sizes = sorted(times)
        for small, large in zip(sizes, sizes[1:], strict=False):
            print(f"  {large:,} / {small:,}: {times[large] / times[small]:.1f}x the time for "
                  f"{large / small:.0f}x the facts")
        for n in (int(s) for s in args.topo.split(",") if s):
            seconds, outcome = time_topo(n, Path(tmp))
            print(f"import {n}x{n} topology matrix: {seconds:7.2f} s, "
                  f"{seconds / (n * n) * 10_000 * 1000:6.2f} ms per 10,000 cells ({outcome})")


if __name__ == "__main__":
    main()
