"""benchmarks/gpu_check.py, run as a user runs it: on a CPU-only machine every GPU item is skipped and
says why; on a GPU machine no item may fail. Both files are written either way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

# Every test here runs benchmarks/gpu_check.py in its own process.
pytestmark = pytest.mark.slow

SCRIPT = REPO_ROOT / "benchmarks" / "gpu_check.py"
ITEMS = ["nvml_vs_nvidia_smi", "cuda_events", "cuda_graph_launch", "gemm_bf16", "gemm_fp16", "device_copy",
         "host_device_copies", "p2p", "nccl_allreduce", "decode_eager_and_graphed", "quick_suite_wall_time"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          check=False, cwd=REPO_ROOT)


def test_writes_json_and_table_and_says_why_each_item_was_skipped(tmp_path: Path) -> None:
    out = tmp_path / "check"
    done = _run(str(out), "--budget-s", "1")
    report = json.loads((out / "gpu_check.json").read_text("utf-8"))
    table = (out / "gpu_check.md").read_text("utf-8")
    assert [item["item"] for item in report["items"]] == ITEMS
    assert done.returncode == 0, done.stderr
    assert not [item for item in report["items"] if item["status"] == "failed"]
    if report["device"] not in ("no CUDA device", "torch not importable"):
        assert {item["item"] for item in report["items"] if item["status"] == "ok"} >= {
            "cuda_events", "cuda_graph_launch", "gemm_bf16", "device_copy", "decode_eager_and_graphed"}
    else:
        for item in report["items"]:
            assert item["status"] == "skipped" and item["reason"], item
        assert all("sees no CUDA device" in item["reason"] for item in report["items"][1:])
        assert "NVML" in report["items"][0]["reason"]
    for name in ITEMS:
        assert f"| {name} | " in table
    # A second run does not overwrite the first without --force.
    again = _run(str(out))
    assert again.returncode == 2 and "--force" in again.stderr
