"""Every real pasted report in tests/data/reports imports with its facts in the owning probes' shapes.

The expected values below were read off each file by hand (the GPU lines, the driver line, the
`[pip3]`/`[conda]` rows or SGLang's `<package>: <version>` rows counted), not produced by the parser.
Packages: distinct names the text lists with a version (a vLLM report's `vLLM Version` counts as
the vllm package; SGLang's `PyTorch:` line as torch; `Module Not Found` and `Could not collect` do
not). Conda: distinct names of the `[conda]` rows. None: the text does not say (cut, or not printed).
"""

from __future__ import annotations

from typing import Any

import pytest

from driftcheck.reports.importer import parse_text
from tests.conftest import DATA

REPORTS = DATA / "reports"
P, V, S, T = "pytorch-collect-env", "vllm-collect-env", "sglang-check-env", "nvidia-smi-table"

# file: (format, torch version, torch CUDA, GPU models, GPU count, driver, packages, conda)
EXPECTED: dict[str, tuple[str, str | None, str | None, set[str], int | None, str | None, int, int]] = {
    "smi_01": (T, None, None, {"NVIDIA RTX PRO 6000 Blac..."}, 1, "580.105.08", 0, 0),
    # Cut among the GPUs: their rows are read, their number is not known (the paste may have had more).
    "smi_02": (T, None, None, {"NVIDIA A800 80GB PCIe"}, None, "550.54.15", 0, 0),
    "smi_03": (T, None, None, {"NVIDIA H100 NVL"}, None, "575.51.03", 0, 0),
    # Windows (`WDDM`/`TCC` where Linux prints persistence) and WSL (`CUDA Version: ERR!`, no CUDA fact), all cut.
    "smi_04": (T, None, None, {"NVIDIA GeForce ..."}, None, "526.47", 0, 0),
    "smi_05": (T, None, None, {"NVIDIA GeForce RTX 3060 ..."}, None, "546.80", 0, 0),
    "smi_06": (T, None, None, {"Tesla P4"}, None, "538.15", 0, 0),
    "sglang_08": (S, "2.3.1+cu121", "12.1", {"NVIDIA A800-SXM4-80GB"}, 8, "470.161.03", 20, 0),
    "sglang_09": (S, "2.4.0+cu121", "12.1", {"NVIDIA GeForce RTX 2080 Ti"}, 2, "535.183.01", 24, 0),
    "sglang_10": (S, "2.4.0+rocm6.3.0", None, {"AMD Radeon RX 7900 XT"}, 1, None, 24, 0),
    "sglang_11": (S, "2.5.1+cu124", "12.4", {"NVIDIA H200"}, 8, "550.127.05", 26, 0),
    "sglang_12": (S, "2.5.1+cu124", "12.4", {"NVIDIA H20"}, 8, "535.161.08", 27, 0),
    "sglang_13": (S, "2.5.1+cu124", "12.4", {"NVIDIA H800"}, 8, "550.144.03", 26, 0),
    "sglang_14": (S, "2.9.1+cu128", "12.8", {"NVIDIA H20-3e"}, 4, "570.133.20", 29, 0),
    "sglang_15": (S, "2.8.0+cu126", "12.6", {"NVIDIA H100 80GB HBM3"}, 8, "570.124.06", 28, 0),
    "sglang_16": (S, "2.6.0+cu124", "12.4", {"NVIDIA H100 80GB HBM3"}, 8, "550.127.08", 26, 0),
    "sglang_17": (S, "2.9.1+cu130", "13.0", {"NVIDIA GB300"}, 4, "580.82.07", 29, 0),
    "sglang_18": (S, "2.5.1+cu124", "12.4", {"NVIDIA H100 80GB HBM3"}, 8, "535.230.02", 13, 0),
    "sglang_19": (S, "2.4.0+cu121", "12.1", {"NVIDIA A40"}, 1, "535.104.12", 25, 0),
    "torch_01": (P, "2.0.0.dev20230228+cpu-cxx11-abi", None, set(), None, None, 4, 5),
    "torch_02": (P, "1.14.0a0+410ce96", "11.8", {"NVIDIA RTX A5000"}, 1, "515.65.01", 9, 0),
    "torch_03": (P, "1.11.0+cu115", "11.5", {"NVIDIA RTX A5000"}, 8, "510.73.08", 10, 10),
    "torch_04": (P, "1.12.1+cu116", "11.6", {"NVIDIA GeForce RTX 3090"}, 3, "515.65.01", 4, 4),
    "torch_05": (P, "1.12.0", "11.6", {"NVIDIA GeForce RTX 2080"}, 1, "515.43.04", 4, 16),
    "torch_06": (P, "1.14.0.dev20221104", None, set(), None, None, 7, 7),
    "torch_07": (P, "1.11.0", None, set(), None, None, 2, 10),
    "torch_08": (P, "1.11.0+cu102", "10.2", {"GeForce RTX 2080 Ti"}, 1, "440.64", 5, 0),
    "torch_09": (P, "1.12.0a0+gitec8d677", "11.6", {"NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 2080 Ti"}, 2,
                 "510.54", 5, 0),
    "torch_10": (P, "1.9.0a0+gitd69c22d", "11.0", {"Tesla V100-SXM2-32GB"}, 4, "450.51.06", 2, 11),
    "torch_11": (P, "1.9.1", "11.1", {"GeForce RTX 3090", "TITAN V"}, 4, "455.45.01", 4, 12),
    "torch_12": (P, "1.8.0a0+af2250e", "11.0", {"GeForce RTX 2060"}, 2, "460.27.04", 4, 8),
    "torch_13": (P, "1.7.0+cu101", "10.1", {"Quadro RTX 6000"}, 1, "455.32.00", 4, 11),
    "torch_14": (P, "1.6.0", "10.2", {"GeForce RTX 2080"}, 1, "450.51.05", 3, 10),
    "torch_15": (P, "1.5.0", "10.2", {"GeForce GTX 1080"}, 1, "430.26", 7, 14),
    "torch_16": (P, "1.4.0+cpu", None, set(), None, None, 3, 0),
    "torch_17": (P, "1.3.0a0+de394b6", "10.0", {"GeForce GTX 1080 Ti"}, 1, "411.31", 6, 11),
    "torch_18": (P, "1.2.0.dev20190605", "9.0.176", {"Tesla P100-PCIE-16GB"}, 2, "396.26", 2, 5),
    "torch_19": (P, "1.1.0", "9.0", {"GeForce GTX 1080 Ti"}, 1, "419.67", 5, 10),
    "torch_20": (P, "1.0.0", "9.0.176", {"GeForce GTX 980M"}, 1, "396.44", 0, 6),
    "torch_21": (P, "0.5.0a0+72f91b1", None, set(), None, None, 4, 3),
    "torch_22": (P, "2.6.0.dev20241230+cu126", "12.6", {"Tesla V100-SXM2-32GB"}, 4, "560.35.03", 0, 0),
    "torch_23": (P, "2.10.0+cu129", "12.9", {"NVIDIA GeForce RTX 5060 Ti"}, 1, "580.126.09", 0, 0),
    "torch_24": (P, "2.8.0.dev20250528+cpu", None, set(), None, None, 0, 0),
    "torch_25": (P, "2.5.1+cu118", "11.8", {"Tesla V100S-PCIE-32GB"}, None, None, 0, 0),
    "torch_26": (P, "2.7.0+cu128", "12.8", {"NVIDIA A100-SXM4-40GB"}, 1, "575.51.03", 0, 0),
    # MIG devices listed under GPU 0: part of the list, no GPU of their own.
    "torch_27": (P, "2.5.0.dev20240705+cu121", "12.1", {"NVIDIA A100-SXM4-80GB"}, 1, "535.161.08", 0, 0),
    "vllm_01": (V, "2.1.2+cu121", "12.1", {"NVIDIA A30"}, 8, "535.86.10", 4, 3),
    "vllm_02": (V, "2.2.1+cu121", "12.1", {"NVIDIA L20"}, 8, "550.54.15", 5, 4),
    "vllm_03": (V, "2.4.0.dev20240415+rocm6.0", None, {"AMD Instinct MI300X (gfx942:sramecc+:xnack-)"}, None, None,
                5, 1),
    "vllm_04": (V, "2.4.0+cpu", None, set(), None, None, 7, 0),
    "vllm_05": (V, "2.5.1+cu124", "12.4", {"NVIDIA H20"}, 4, "535.183.06", 22, 20),
    "vllm_06": (V, "2.5.1+cu124", "12.4", {"NVIDIA H800 PCIe"}, 1, "550.54.14", 23, 22),
    "vllm_07": (V, "2.7.0a0+git295f2ed", None, {"AMD Instinct MI300X (gfx942:sramecc+:xnack-)"}, None, None, 7, 0),
    "vllm_08": (V, "2.7.0+cu128", "12.8", {"NVIDIA GB200"}, 4, "570.158.01", 9, 0),
    "vllm_09": (V, "2.9.0.dev20250702+cu128", "12.8", {"GRID A100-40C"}, 3, "570.133.20", 29, 0),
    "vllm_10": (V, "2.7.0+cu128", "12.8", {"NVIDIA B200"}, 8, "575.57.08", 22, 0),
    "vllm_11": (V, "2.5.1+cu124", "12.4", set(), None, None, 0, 0),
    # vllm_12..14 are cut before vLLM's own lines: what is left is PyTorch's report, and reads as one.
    "vllm_12": (P, "2.5.1+cu121", "12.1", {"NVIDIA GeForce RTX 4090"}, 1, "535.183.01", 0, 0),
    "vllm_13": (P, "2.5.1+cu121", "12.1", {"NVIDIA A100-SXM4-40GB"}, 1, "535.154.05", 0, 0),
    "vllm_14": (P, "2.4.0+cu121", "12.1", {"NVIDIA A10"}, 4, "470.129.06", 0, 0),
    # Cut after its first GPU line: one GPU is all the text names.
    "vllm_15": (V, "2.8.0+cu128", "12.8", {"NVIDIA A100-SXM4-80GB"}, None, None, 0, 0),
    # The paste starts mid-report (no torch line): what is there still lands.
    "vllm_16": (V, None, None, {"NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5060 Ti"}, 2, "581.57", 0, 0),
    "vllm_17": (P, "2.5.1+cu124", "12.4", set(), None, None, 0, 0),
}


def _import(name: str) -> Any:
    path = REPORTS / f"{name}.txt"
    return parse_text(path.read_text("utf-8"), path.name)


def test_every_file_is_in_the_table() -> None:
    assert sorted(p.stem for p in REPORTS.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_fields(name: str) -> None:
    fmt, torch, cuda, models, count, driver, packages, conda = EXPECTED[name]
    imported = _import(name)
    probes = imported.parsed.probes
    assert imported.format.name == fmt
    assert probes.get("torch", {}).get("version") == torch
    assert probes.get("torch", {}).get("cuda_version") == cuda
    gpu = probes.get("gpu", {})
    assert {g["name"] for g in (gpu.get("gpus") or {}).values()} == models
    assert gpu.get("gpu_count") == count
    assert gpu.get("driver_version") == driver
    listed = probes.get("packages", {})
    assert len(listed.get("packages") or {}) == packages
    assert len(listed.get("conda") or {}) == conda


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_nothing_is_dropped(name: str) -> None:
    """Every non-blank line is claimed by a parser, set aside as paste noise, or kept verbatim."""
    imported = _import(name)
    text = (REPORTS / f"{name}.txt").read_text("utf-8")
    assert imported.parsed.unclaimed[0].startswith("# source:")  # the note this directory adds
    kept = set(imported.parsed.unclaimed) | set(imported.parsed.noise)
    for line in imported.parsed.unclaimed + imported.parsed.noise:
        assert line.strip() in text
    assert len(kept) >= 1


def test_shapes_are_the_live_probes() -> None:
    """A report's pip list and torch facts have the keys a live probe writes, restricted to what it carries."""
    probes = _import("vllm_10").parsed.probes
    assert probes["packages"]["packages"]["torch"] == {"name": "torch", "version": "2.7.0+cu128"}
    assert probes["torch"]["cuda_wheels"]["nvidia-nccl-cu12"] == "2.26.2"
    assert (probes["torch"]["nccl_version"], probes["torch"]["cudnn_version"]) == ("2.26.2", "9.7.1")
    assert probes["pcie"]["topology"]["pairs"]["GPU0~GPU7"] == "NV18"
    assert probes["env"]["vars"]["NCCL_CUMEM_ENABLE"] == "0" and probes["nccl"]["env"] == {"NCCL_CUMEM_ENABLE": "0"}
    assert probes["system"]["cpu"] == {"model": "INTEL(R) XEON(R) PLATINUM 8570", "vendor": "GenuineIntel",
                                       "sockets": 2, "cores": 112, "threads": 224, "online": "0-223"}
    assert probes["python"]["platform"]["release"] == "5.15.0-143-generic"


def test_variants_are_named() -> None:
    assert _import("vllm_10").parsed.variant == "sectioned (2025)"
    assert _import("vllm_01").parsed.variant == "classic"
    assert _import("torch_14").parsed.variant == "short form (no CPU block)"
    assert _import("torch_01").parsed.variant == "with CPU block"


def test_a_matrix_cut_by_the_paste_is_kept_as_text_not_read_as_a_smaller_machine() -> None:
    parsed = _import("sglang_14").parsed  # 8 GPUs and 4 NICs in the header, five rows before the cut
    assert "pcie" not in parsed.probes
    assert parsed.fields["topology (unreadable matrix)"].splitlines()[-1].startswith("GPU4\tNV18")
    assert _import("sglang_09").parsed.probes["pcie"]["topology"]["pairs"] == {"GPU0~GPU1": "PHB"}


def test_mig_devices_stay_in_the_gpu_list_as_text() -> None:
    parsed = _import("torch_27").parsed
    assert parsed.fields["MIG devices"] == "MIG 3g.40gb Device 0:\nMIG 3g.40gb Device 1:"
    assert "device_count" not in parsed.probes["torch"]  # CUDA enumerates MIG instances, not GPUs
    assert parsed.fields.get("MIG 3g.40gb Device 0") is None


@pytest.mark.parametrize("name, versions", [
    ("torch_11", ["7.5.0", "7.6.2", "7.6.5"]),
    ("torch_20", ["6.0.21", "7.1.4"]),
    ("vllm_02", ["8.9.7", "9.0.0"]),
])
def test_several_cudnn_libraries_on_disk_give_no_cudnn_fact_and_stay_as_text(name: str, versions: list[str]) -> None:
    """collect_env lists the system's libcudnn files; when they disagree, which one torch loads is unknown."""
    parsed = _import(name).parsed
    assert "cudnn_version" not in parsed.probes["torch"]
    assert all(version in parsed.fields["cuDNN version"] for version in versions)
