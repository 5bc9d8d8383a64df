"""How long `driftcheck diff` (structural diff + explain, the full JSON report) takes on two full
snapshots of a large environment, next to a plain `deepdiff` of the same two documents.

The environment: 8 GPUs from a recorded 8x H100 `nvidia-smi -q` (tests/data/hosts/h100x8-nvidia-smi),
600 packages with 2,400 compiled files, 300 environment variables, the rest of tests/data/pairs/base.json.
B differs from A by a realistic handful of changes (a package upgrade, a rebuilt .so, an NCCL
variable, a lowered power limit on all 8 GPUs, a narrower PCIe link, volatile readings).

    python benchmarks/diff_speed.py [--repeat 7]

deepdiff is not a dependency of driftcheck: install the `benchmarks` extra (`pip install -e .[benchmarks]`).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

try:
    from deepdiff import DeepDiff
except ImportError:
    sys.exit("benchmarks/diff_speed.py compares against deepdiff, which driftcheck does not need: "
             "pip install -e .[benchmarks] (or pip install 'deepdiff>=8.0')")

from driftcheck.analysis.diff import diff_snapshots  # noqa: E402
from driftcheck.analysis.explain import explain  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402


def _load_base_builder() -> Any:
    spec = importlib.util.spec_from_file_location("make_base", ROOT / "tests" / "data" / "pairs" / "make_base.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def large_document() -> dict[str, Any]:
    """Snapshot A: the pairs' base with 8 recorded GPUs, 600 packages, 2,400 files, 300 env vars."""
    builder = _load_base_builder()
    doc: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "pairs" / "base.json").read_text("utf-8"))
    text = (ROOT / "tests" / "data" / "hosts" / "h100x8-nvidia-smi" / "nvidia-smi-q.txt").read_text("utf-8")
    gpus, pcie = {}, {}
    for index, block in enumerate(builder.gpu_blocks(text)):
        record, link, replays = builder.gpu_record(block, index)
        gpus[record["uuid"]] = record
        pcie[record["uuid"]] = {"index": index, "pci_bus_id": record["pci_bus_id"], "link": link,
                                "replay_counter": replays, "cpu_affinity": "0-55", "numa_node": index // 4}
    doc["probes"]["gpu"]["data"].update(gpus=gpus, gpu_count=len(gpus))
    doc["probes"]["pcie"]["data"]["gpus"] = pcie
    doc["probes"]["pcie"]["data"]["topology"]["pairs"] = {f"GPU{i}~GPU{j}": "NV18" for i in range(8)
                                                          for j in range(i + 1, 8)}
    packages = doc["probes"]["packages"]["data"]["packages"]
    files = doc["probes"]["kernels"]["data"]["files"]
    for n in range(600):
        name = f"pkg-{n:04d}"
        packages[name] = {"name": name, "version": f"{n % 7}.{n % 13}.{n % 5}", "installer": "pip",
                          "location": "/opt/venv/lib/python3.11/site-packages", "editable": False,
                          "direct_url": None, "wheel_tags": ["cp311-cp311-manylinux_2_28_x86_64"], "build_id": None,
                          "compiled_files": 4}
        for k in range(4):
            rel = f"pkg_{n:04d}/_ext{k}.cpython-311-x86_64-linux-gnu.so"
            files[f"{name}:{rel}"] = {"path": rel, "size_bytes": 100_000 + n * 10 + k,
                                      "sha256": hashlib.sha256(rel.encode()).hexdigest(), "record_match": True}
    env = doc["probes"]["env"]["data"]["vars"]
    env.update({f"APP_SETTING_{n:03d}": f"value-{n}" for n in range(300)})
    return doc


def changed_document(a: dict[str, Any]) -> dict[str, Any]:
    """Snapshot B: A with a realistic handful of changes."""
    b = copy.deepcopy(a)
    b["created_at"] = "2026-11-30T09:00:00.000000Z"
    b["probes"]["packages"]["data"]["packages"]["pkg-0042"]["version"] = "9.9.9"
    files = b["probes"]["kernels"]["data"]["files"]
    files["pkg-0100:pkg_0100/_ext0.cpython-311-x86_64-linux-gnu.so"]["sha256"] = "0" * 64
    b["probes"]["env"]["data"]["vars"]["NCCL_P2P_DISABLE"] = "1"
    for uuid, record in b["probes"]["gpu"]["data"]["gpus"].items():
        record["power"]["limit_w"] = 500.0
        record["power"]["draw_w"] = 71.3
        b["probes"]["pcie"]["data"]["gpus"][uuid]["link"]["width_current"] = 8 if record["index"] == 3 else 16
    b["probes"]["system"]["data"]["uptime_s"] = 99
    return b


# `explain` itself (ranking, merging by root, rendering fixes) on the two documents, the diff given.
EXPLAIN_TARGET_S = 0.2


def _median_seconds(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    a_doc = large_document()
    b_doc = changed_document(a_doc)
    a, b = Snapshot(a_doc, "A"), Snapshot(b_doc, "B")
    report = explain(diff_snapshots(a, b)).to_json()
    ours = _median_seconds(lambda: explain(diff_snapshots(a, b)).to_json(), args.repeat)
    diff = diff_snapshots(a, b)
    explain_only = _median_seconds(lambda: explain(diff), args.repeat)
    plain = _median_seconds(lambda: DeepDiff(a_doc, b_doc), args.repeat)
    n_packages = len(a_doc["probes"]["packages"]["data"]["packages"])
    n_gpus = len(a_doc["probes"]["gpu"]["data"]["gpus"])
    size = len(json.dumps(a_doc))
    print(f"snapshots: {n_packages} packages, {n_gpus} GPUs, {size / 1e6:.1f} MB of JSON each")
    print(f"driftcheck diff + explain (JSON report): {ours * 1000:.0f} ms (median of {args.repeat})")
    print(f"  of which explain (rank, merge, fixes): {explain_only * 1000:.0f} ms "
          f"(target < {EXPLAIN_TARGET_S * 1000:.0f} ms)")
    print(f"plain deepdiff of the two documents:     {plain * 1000:.0f} ms (median of {args.repeat})")
    print(f"ratio driftcheck / deepdiff: {ours / plain:.2f}")
    print("top causes: " + "; ".join(e["title"] for e in report["explanations"][:4]))
    return 0 if ours < 1.0 and explain_only < EXPLAIN_TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
