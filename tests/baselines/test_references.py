"""The reference table: device names as torch/NVML report them map to the right entry."""

from __future__ import annotations

import pytest

from driftcheck.baselines.references import efficiency, pcie_peak_gbps, reference_for, reference_table


@pytest.mark.parametrize(("name", "model"), [
    ("NVIDIA H200", "H200"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM"),
    ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA A10", "A10"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"),
])
def test_known_devices(name: str, model: str) -> None:
    entry = reference_for(name)
    assert entry is not None and entry["model"] == model


@pytest.mark.parametrize("name", ["NVIDIA L40", "NVIDIA A10G", "Tesla V100-SXM2-32GB", "cpu"])
def test_unknown_devices_have_no_reference(name: str) -> None:
    assert reference_for(name) is None


def test_every_entry_has_the_figures_efficiency_needs() -> None:
    for entry in reference_table():
        assert entry["bf16_tflops"] > 0 and entry["memory_gbps"] > 0 and entry["pcie_gen"] in (4, 5)


def test_efficiency_against_h200() -> None:
    h200 = reference_for("NVIDIA H200")
    assert pcie_peak_gbps(h200 or {}) == pytest.approx(63.01)
    eff = efficiency(h200, "bf16_tflops", 791.2)
    assert eff == {"reference": "bf16_tflops", "model": "H200", "peak": 989.0, "ratio": 0.8}
    assert efficiency(h200, "nvlink_gbps", 360.0)["ratio"] == pytest.approx(0.8)  # type: ignore[index]
    assert efficiency(None, "bf16_tflops", 1.0) is None
    assert efficiency(h200, None, 1.0) is None
