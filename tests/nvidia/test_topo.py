"""Every recorded `nvidia-smi topo -m` parses: pair levels, affinity columns, NICs, and the odd pastes."""

from __future__ import annotations

import re

import pytest

from driftcheck.nvidia import NvidiaFormatError, parse_topo
from tests.nvidia.helpers import NVIDIA_DATA, nvidia_text

ABSENT = "absent"  # the output has no such column

# file, GPUs, NICs, last GPU pair and its level, GPU0 CPU affinity, GPU0 NUMA affinity, GPU0 GPU NUMA ID
TOPO_CASES = [
    ("a100-sxm4-80gb-x1_470.161.03_single_vllm-7112.txt", 1, 0, None, None, "0-15", None, ABSENT),
    ("a100-sxm4-80gb-x2of8_470.103.01_mlx5-x8_tabs_vllm-6099.txt", 2, 8, "GPU0~GPU1", "NV12", "0-47,96-143", "0",
     ABSENT),
    ("a100-sxm4-80gb-x4_535.54.03_nv6_numa-na_vllm-6776.txt", 4, 2, "GPU2~GPU3", "NV6", "0-47", None, None),
    ("a100-sxm4-80gb-x8_550.54.14_nv12_nic4_tabs_sglang-857.txt", 8, 4, "GPU6~GPU7", "NV12", "0-31,64-95", "0", None),
    ("a30-x2_535.104.12_sys_ansi-esc_vllm-4252.txt", 2, 0, "GPU0~GPU1", "SYS", "0,2,4,6,8,10", "0", None),
    ("a40-x4_560.35.05_sys_numa-per-gpu_vllm-13655.txt", 4, 1, "GPU2~GPU3", "SYS", "48-63", "3", None),
    ("a800-80gb-pcie-x8_530.30.02_nvlink-bridges-nv4-nv6-nv8_vllm-9469.txt", 8, 2, "GPU6~GPU7", "PIX", "0-15,64-79",
     "0", ABSENT),
    ("a800-sxm4-80gb-x8_470.161.03_nv8_mlx5-x9_sglang-737.txt", 8, 9, "GPU6~GPU7", "NV8", "0-31,64-95", "0", ABSENT),
    ("b200-x8_575.57.08_nv18_nic12_vllm-20862.txt", 8, 12, "GPU6~GPU7", "NV18", "0-27,112-139", "0", None),
    ("gb200-x4_570.158.01_nv18_gpu-numa-id_vllm-19703.txt", 4, 4, "GPU2~GPU3", "NV18", "0-71", "0", "2"),
    ("h100-80gb-hbm3-x1_550.90.07_nic63_vllm-8904.txt", 1, 63, None, None, "56-111,168-223", "1", None),
    ("h100-80gb-hbm3-x1_590.48.01_raw-ansi.txt", 1, 0, None, None, "0-19", "0", None),
    ("h100-80gb-hbm3-x8_535.161.08_nv18_nic10_vllm-5563.txt", 8, 10, "GPU6~GPU7", "NV18", "0-11", "0", None),
    ("h100-nvl-x2_550.127.05_nv12_nic1_sglang-2874.txt", 2, 1, "GPU0~GPU1", "NV12", "0-39", "0", None),
    ("h100-nvl-x4_555.52.04_nv12-phb_tabs_vllm-16259.txt", 4, 0, "GPU2~GPU3", "NV12", "0-253", "0-1", None),
    ("h200-x8_550.54.15_nv18_nic18_vllm-11600.txt", 8, 18, "GPU6~GPU7", "NV18", "0-47,96-143", "0", None),
    ("h200-x8_570.124.06_nv18_no-nic_tabs_sglang-6921.txt", 8, 0, "GPU6~GPU7", "NV18", "0-191", "0", None),
    ("h800-x8_535.161.08_nv8_nic10_tabs_vllm-15199.txt", 8, 10, "GPU6~GPU7", "NV8", "0-47,96-143", "0", None),
    ("l4-x8_570.124.06_pcie_nic2_vllm-16543.txt", 8, 2, "GPU6~GPU7", "NODE", "0,2,4,6,8,10", "0", None),
    ("l40-x8_535.161.08_pcie_nic3-bond_sglang-4196.txt", 8, 3, "GPU6~GPU7", "PXB", "0-31,64-95", "0", None),
    ("l40s-x8_535.247.01_pcie-node-sys_sglang-6200.txt", 8, 0, "GPU6~GPU7", "NODE", "0-47,96-143", "0", None),
    ("rtx-3090-x8_535.183.06_pcie-pix-node-sys_vllm-15509.txt", 8, 0, "GPU6~GPU7", "PIX", "0-15,32-47", "0", None),
    ("rtx-4080-x10_555.42.02_pcie_sglang-7903.txt", 10, 0, "GPU8~GPU9", "PIX", "0-15,32-47", "0", None),
    ("rtx-4090-x8_525.105.17_pcie_nic2_ansi-esc_vllm-15078.txt", 8, 2, "GPU6~GPU7", "PIX", "0-31,64-95", "0", ABSENT),
    ("v100-sxm2-32gb-x8_450.156.00_mlx5-x18_vllm-4432.txt", 8, 18, "GPU6~GPU7", "NV1", "0-23,48-71", "0", ABSENT),
    ("v100-sxm2-32gb-x8_535.183.01_nv1-nv2_nic4_vllm-6106.txt", 8, 4, "GPU6~GPU7", "NV1", "0-23,48-71", "0", None),
]
ERROR_OUTPUTS = ["rtx-2080-super-x1_591.86_windows_error.txt"]


def test_every_recorded_matrix_has_a_case() -> None:
    names = sorted(p.name for p in (NVIDIA_DATA / "topo").glob("*.txt"))
    assert names == sorted([c[0] for c in TOPO_CASES] + ERROR_OUTPUTS)


@pytest.mark.parametrize(("name", "gpus", "nics", "pair", "level", "cpus", "numa", "gpu_numa"), TOPO_CASES,
                         ids=[c[0] for c in TOPO_CASES])
def test_topo_values(name: str, gpus: int, nics: int, pair: str | None, level: str | None, cpus: str,
                     numa: str | None, gpu_numa: str | None) -> None:
    topology = parse_topo(nvidia_text(f"topo/{name}"))
    gpu_names = [d for d in topology["devices"] if d.startswith("GPU")]
    assert gpu_names == [f"GPU{i}" for i in range(gpus)]
    assert len(topology["nics"]) == nics
    assert len(topology["pairs"]) == len(topology["devices"]) * (len(topology["devices"]) - 1) // 2
    gpu_pairs = [p for p in topology["pairs"] if p.count("GPU") == 2]
    assert (gpu_pairs[-1] if gpu_pairs else None) == pair
    if pair:
        assert topology["pairs"][pair] == level
    assert topology["cpu_affinity"]["GPU0"] == cpus
    assert topology["numa_affinity"]["GPU0"] == numa
    assert (ABSENT if topology["gpu_numa_id"] is None else topology["gpu_numa_id"]["GPU0"]) == gpu_numa


def test_mixed_nvlink_bridges_and_pcie_levels() -> None:
    pairs = parse_topo(nvidia_text("topo/a800-80gb-pcie-x8_530.30.02_nvlink-bridges-nv4-nv6-nv8_vllm-9469.txt"))[
        "pairs"]
    assert {pairs["GPU0~GPU2"], pairs["GPU0~GPU1"], pairs["GPU5~GPU6"], pairs["GPU0~GPU4"]} == {"NV8", "PIX", "NV4",
                                                                                              "SYS"}


def test_nic_legend_and_header_named_nics() -> None:
    b200 = parse_topo(nvidia_text("topo/b200-x8_575.57.08_nv18_nic12_vllm-20862.txt"))
    assert b200["nics"]["NIC0"] == "mlx5_4" and b200["nics"]["NIC11"] == "mlx5_15"
    assert b200["pairs"]["GPU0~NIC0"] == "PIX"
    old = parse_topo(nvidia_text("topo/a800-sxm4-80gb-x8_470.161.03_nv8_mlx5-x9_sglang-737.txt"))
    assert old["nics"]["mlx5_0"] == "mlx5_0"


def test_numa_node_per_gpu() -> None:
    a40 = parse_topo(nvidia_text("topo/a40-x4_560.35.05_sys_numa-per-gpu_vllm-13655.txt"))
    assert a40["numa_affinity"] == {"GPU0": "3", "GPU1": "1", "GPU2": "7", "GPU3": "5"}
    gb200 = parse_topo(nvidia_text("topo/gb200-x4_570.158.01_nv18_gpu-numa-id_vllm-19703.txt"))
    assert gb200["gpu_numa_id"] == {"GPU0": "2", "GPU1": "10", "GPU2": "18", "GPU3": "26"}


def test_windows_error_output_is_a_format_error_naming_the_error() -> None:
    with pytest.raises(NvidiaFormatError, match="Option -m is missing its value"):
        parse_topo(nvidia_text("topo/rtx-2080-super-x1_591.86_windows_error.txt"))


def test_row_with_missing_cells_is_refused() -> None:
    with pytest.raises(NvidiaFormatError, match="one level per device"):
        parse_topo("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \t0-3\nGPU1\tNV4\t X \t0-3\n")


def _matrix(n: int) -> str:
    names = [f"GPU{i}" for i in range(n)]
    rows = [name + "\t" + "\t".join("X" if j == i else "NV18" for j in range(n)) + "\t0-55\t0"
            for i, name in enumerate(names)]
    return "\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\n" + "\n".join(rows) + "\n\nLegend:\n"


class _CountingLevels:
    """Stands in for the pattern of a topology level and counts the cells read as levels."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.cells = 0

    def match(self, cell: str) -> re.Match[str] | None:
        self.cells += 1
        return self.pattern.match(cell)


def test_a_matrix_larger_than_any_machine_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from driftcheck.nvidia import topo

    levels = _CountingLevels(topo._LEVEL)
    monkeypatch.setattr(topo, "_LEVEL", levels)
    largest = topo.MAX_DEVICES
    assert len(parse_topo(_matrix(largest))["pairs"]) == largest * (largest - 1) // 2
    # The pairs grow as the square of the devices: every cell off the diagonal is read as a level.
    assert levels.cells == largest * (largest - 1)
    levels.cells = 0
    with pytest.raises(NvidiaFormatError, match=f"more than {largest} devices"):
        parse_topo(_matrix(3000))  # 58 s and 2.4 GB before the limit
    # Refused from the row count alone: not one of its nine million cells was read.
    assert levels.cells == 0
