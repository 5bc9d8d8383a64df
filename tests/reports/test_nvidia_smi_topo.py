"""A bare `nvidia-smi topo -m` the paste cuts short is refused and kept as text, never read as a smaller machine.

`topo/cut_8gpu_2017.txt` (real): a header of 8 GPUs and a NIC, then 5 rows. Read as it stood, the rows made a
5-device machine whose last header columns (GPU5..GPU7, mlx4_0) became its CPU and NUMA affinity.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from driftcheck.reports.importer import ImportFormatError, import_texts, parse_text
from tests.conftest import DATA

CUT = DATA / "reports" / "topo" / "cut_8gpu_2017.txt"


def test_a_cut_matrix_is_refused_with_what_it_holds() -> None:
    with pytest.raises(ImportFormatError, match="the matrix is cut: its header names 9 devices, 5 rows follow"):
        parse_text(CUT.read_text("utf-8"), CUT.name)


def test_in_an_issue_body_a_cut_matrix_is_an_unread_section() -> None:
    pip_list = (DATA / "reports" / "pip" / "list_small.txt").read_text("utf-8")
    body = f"```\n{CUT.read_text('utf-8')}```\n\n```\n{pip_list}```\n"
    host = import_texts([("body", "body", body)]).document["host"]
    assert [s["format"] for s in host["sources"]] == ["pip freeze / pip list"]
    assert "the matrix is cut" in host["unread_sections"][0]["reason"]


# Whole matrices pasted on their own (tabs, spaces, indented with a legend wrapped at 80 columns): devices, every
# pair, CPU and NUMA affinity, as read by hand.
WHOLE = {
    "tabs_2gpu_phb_2026.txt": (["GPU0", "GPU1"], {"GPU0~GPU1": "PHB"}, {"GPU0": "0-63", "GPU1": "0-63"},
                               {"GPU0": "0", "GPU1": "0"}),
    "indented_wrapped_legend_2026.txt": (["GPU0", "GPU1"], {"GPU0~GPU1": "NODE"}, {"GPU0": "0-15", "GPU1": "0-15"},
                                         {"GPU0": "0", "GPU1": "0"}),
    "five_gpus_two_numa_2026.txt": (
        ["GPU0", "GPU1", "GPU2", "GPU3", "GPU4"],
        {"GPU0~GPU1": "SYS", "GPU0~GPU2": "SYS", "GPU0~GPU3": "SYS", "GPU0~GPU4": "SYS", "GPU1~GPU2": "PHB",
         "GPU1~GPU3": "NODE", "GPU1~GPU4": "NODE", "GPU2~GPU3": "NODE", "GPU2~GPU4": "NODE", "GPU3~GPU4": "PHB"},
        {"GPU0": "8-15,24-31", **{f"GPU{i}": "0-7,16-23" for i in range(1, 5)}},
        {"GPU0": "1", **{f"GPU{i}": "0" for i in range(1, 5)}}),
}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_a_whole_matrix_gives_every_pair_and_affinity(name: str) -> None:
    imported = parse_text((CUT.parent / name).read_text("utf-8"), name)
    assert imported.format.name == "nvidia-smi-topo" and imported.parsed.role == "topology"
    topology = imported.parsed.probes["pcie"]["topology"]
    devices, pairs, cpus, numa = WHOLE[name]
    assert topology["devices"] == devices and topology["pairs"] == pairs
    assert topology["cpu_affinity"] == cpus and topology["numa_affinity"] == numa
    # `GPU NUMA ID` says N/A on these machines: unreadable, not a node.
    assert set(topology["gpu_numa_id"].values()) == {None}


@pytest.mark.parametrize(("name", "reason"), [
    ("cut_16gpu_nv6_mlx5_2021.txt", "the matrix is cut: its header names 26 devices, 5 rows follow"),
    ("cut_8gpu_10nic_pix_2025.txt", "row 'GPU6' does not hold one level per device"),
])
def test_matrices_cut_mid_row_are_refused_never_a_smaller_machine(name: str, reason: str) -> None:
    with pytest.raises(ImportFormatError, match=reason):
        parse_text((CUT.parent / name).read_text("utf-8"), name)


# A real matrix (tests/data/nvidia/SOURCES.md: sglang issue 857, 8x A100 and 4 NICs) cut by the paste after its
# first NIC row: every GPU row is whole, so every pair of a GPU is read; the cut is said, not taken as removed.
A100_NICS = DATA / "nvidia" / "topo" / "a100-sxm4-80gb-x8_550.54.14_nv12_nic4_tabs_sglang-857.txt"


def _cut_after_nic0() -> str:
    lines = A100_NICS.read_text("utf-8").splitlines()
    assert lines[9].startswith("NIC0")
    return "\n".join(lines[:10]) + "\n"


def test_a_matrix_cut_only_after_its_gpu_rows_keeps_them_and_says_what_was_cut(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "topo.txt").write_text(_cut_after_nic0(), "utf-8")
    done = cli("import", str(tmp_path / "topo.txt"), "-o", str(tmp_path / "topo.json"), "--no-store")
    # Before: refused, "the matrix is cut: its header names 12 devices, 9 rows follow".
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "topo.json").read_text("utf-8"))
    topology = document["probes"]["pcie"]["data"]["topology"]
    assert topology["devices"][:8] == [f"GPU{i}" for i in range(8)] and len(topology["devices"]) == 12
    gpu_pairs = {pair: level for pair, level in topology["pairs"].items() if pair.startswith("GPU")}
    assert len(gpu_pairs) == 8 * 7 // 2 + 8 * 4  # every GPU with every GPU and every NIC
    assert gpu_pairs["GPU0~GPU7"] == "NV12" and gpu_pairs["GPU6~NIC2"] == "PXB"
    assert document["host"]["cut"] == ["probes.pcie.data.topology.nics", "probes.pcie.data.topology.pairs"]


def test_a_report_whose_matrix_is_cut_after_its_gpu_rows_keeps_it() -> None:
    """The same cut inside an environment report: the matrix was dropped silently before."""
    body = ("PyTorch version: 2.3.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n\n"
            "GPU Topology:\n" + _cut_after_nic0())
    parsed = parse_text(body, "collect_env.txt").parsed
    assert parsed.probes["pcie"]["topology"]["pairs"]["GPU0~GPU7"] == "NV12"


def test_ibstat_then_a_matrix_cut_after_its_gpu_rows_import_together(cli: Any, tmp_path: Path) -> None:
    """A real `ibstat` (tests/data/reports/SOURCES.md) pasted right above the cut matrix, no fence between."""
    ibstat = (DATA / "reports" / "ib" / "ibstat_roce_2022.txt").read_text("utf-8")
    (tmp_path / "paste.txt").write_text(f"{ibstat}\n{_cut_after_nic0()}", "utf-8")
    done = cli("import", str(tmp_path / "paste.txt"), "-o", str(tmp_path / "paste.json"), "--no-store")
    # Before: refused ("the matrix is cut"), or read as one matrix that lost the adapters.
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "paste.json").read_text("utf-8"))
    assert [source["format"] for source in document["host"]["sources"]] == ["ibstat", "nvidia-smi topo -m"]
    assert document["probes"]["nccl"]["data"]["infiniband"]
    assert document["probes"]["pcie"]["data"]["topology"]["pairs"]["GPU0~GPU7"] == "NV12"
