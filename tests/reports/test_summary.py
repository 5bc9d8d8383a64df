"""`driftcheck show`: a one-screen summary by default, every fact with --full."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from driftcheck.reports.summary import summary_text, topology_line
from driftcheck.snapshot.model import Snapshot
from tests.conftest import DATA
from tests.reports.helpers import large_document


def _eight_gpu_server() -> Snapshot:
    document = large_document()
    gpus = document["probes"]["gpu"]["data"]["gpus"]
    links = document["probes"]["pcie"]["data"]["gpus"]
    third = next(uuid for uuid, g in gpus.items() if g["index"] == 3)
    links[third]["link"]["width_current"] = 8  # one link trained narrower than its maximum
    document["probes"]["env"]["data"]["vars"].update({"NCCL_P2P_DISABLE": "1", "OMP_NUM_THREADS": "8"})
    return Snapshot(document, "large")


def test_summary_of_an_eight_gpu_server_fits_one_screen() -> None:
    text = summary_text(_eight_gpu_server(), None)
    lines = text.splitlines()
    assert len(lines) <= 40 and max(len(line) for line in lines) <= 120, text
    assert "8 × NVIDIA H100 80GB HBM3, driver 535.161.08" in text
    assert "NV18 all pairs" in text
    assert "Gen5 x16 (max Gen5 x16) on 7; GPU3 Gen5 x8 (max Gen5 x16)" in text
    assert "width below max on GPU3" in text
    assert "NCCL_P2P_DISABLE=1" in text and "OMP_NUM_THREADS=8" in text and "APP_SETTING_001" not in text
    assert "governor performance" in text and "THP madvise" in text
    assert "614 installed" in text and "torch 2.13.0+cpu" in text  # the shared fixture's package set
    assert "torch      2.7.0+cu128, CUDA 12.8, NCCL 2.26.2" in text
    assert "\033[" not in text


def test_summary_shows_the_variables_of_every_env_family_of_the_catalog() -> None:
    snapshot = _eight_gpu_server()
    snapshot.document["probes"]["env"]["data"]["vars"].update({"KMP_AFFINITY": "compact", "HOME": "/root"})
    text = summary_text(snapshot, None)
    assert "KMP_AFFINITY=compact" in text and "HOME=" not in text


def test_colour_only_when_asked() -> None:
    assert "\033[1m" in summary_text(_eight_gpu_server(), None, colour=True)


def test_show_default_is_the_summary_and_full_is_every_fact(cli: Callable[..., Any], tmp_path: Path) -> None:
    path = tmp_path / "large.json"
    path.write_text(json.dumps(_eight_gpu_server().document), "utf-8")
    short = cli("show", str(path))
    full = cli("show", str(path), "--full")
    assert short.returncode == full.returncode == 0
    assert len(short.stdout.splitlines()) <= 40 < len(full.stdout.splitlines()) // 50
    assert "[packages] ok" in full.stdout and "[packages]" not in short.stdout


def test_show_of_a_pasted_report(cli: Callable[..., Any]) -> None:
    result = cli("show", str(DATA / "reports" / "sglang_08.txt"))
    assert result.returncode == 0, result.stderr
    assert "8 × NVIDIA A800-SXM4-80GB, driver 470.161.03" in result.stdout
    assert "NV8 all pairs; 9 NICs" in result.stdout
    assert "sglang_08.txt (python3 -m sglang.check_env" in result.stdout


def test_show_of_a_pasted_nvcc_names_the_toolkit(cli: Callable[..., Any]) -> None:
    result = cli("show", str(DATA / "reports" / "nvcc" / "cuda_11_1_builder.txt"))
    assert result.returncode == 0, result.stderr
    assert "cuda toolkit  nvcc 11.1.105, cuda_11.1.TC455_06.29190527_0" in result.stdout


def test_topology_in_one_line() -> None:
    islands = {"devices": ["GPU0", "GPU1", "GPU2", "GPU3"],
               "pairs": {"GPU0~GPU1": "PIX", "GPU0~GPU2": "SYS", "GPU0~GPU3": "SYS", "GPU1~GPU2": "SYS",
                         "GPU1~GPU3": "SYS", "GPU2~GPU3": "PIX"}}
    assert topology_line(islands) == "SYS/PIX: 2 PCIe islands of 2"
    bridged = {"devices": ["GPU0", "GPU1"], "pairs": {"GPU0~GPU1": "PHB"}}
    assert topology_line(bridged) == "PHB all pairs"


def _pair_side(case: str, side: str) -> dict[str, Any]:
    return json.loads((DATA / "pairs" / case / f"{side}.json").read_text("utf-8"))


def test_show_flags_packages_modified_in_place() -> None:
    text = summary_text(Snapshot(_pair_side("modified-in-place", "b"), "b.json"), None)
    assert re.search(r"modified in place\s+torch \(1 file\)\n", text)
    assert "modified in place" not in summary_text(Snapshot(_pair_side("modified-in-place", "a"), "a.json"), None)


def test_show_gives_a_described_server_its_own_perf_vars() -> None:
    document = _pair_side("host-process-added", "b")
    document["probes"]["env"]["data"]["vars"] = {"HOME": "/root"}  # driftcheck's own shell: none set
    document["probes"]["nccl"]["data"]["env"] = {}
    server = document["probes"]["process"]["data"]["processes"]["sglang.launch_server"]
    server["environ"] = {"NCCL_P2P_DISABLE": "1", "HOME": "/root"}
    text = summary_text(Snapshot(document, "b.json"), None)
    assert re.search(r"perf vars of sglang.launch_server\s+NCCL_P2P_DISABLE=1\n", text)
    # The shell's line says whose it is, so "none set" cannot be read as the server's.
    assert re.search(r"perf vars \(driftcheck's shell\)\s+none set\n", text)
