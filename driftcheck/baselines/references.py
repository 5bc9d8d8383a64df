"""Reference peaks of known GPU models (`references.yaml`), and efficiency of a result against them."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from driftcheck.baselines.record import Efficiency

# Usable bandwidth of one PCIe lane per direction in GB/s, after line encoding (8b/10b, 128b/130b).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


@lru_cache(maxsize=1)
def reference_table() -> tuple[dict[str, Any], ...]:
    """Every entry of the shipped reference file, in match order."""
    text = resources.files("driftcheck.baselines").joinpath("references.yaml").read_text("utf-8")
    return tuple(yaml.safe_load(text)["gpus"])


def reference_for(device_name: str) -> dict[str, Any] | None:
    """The reference entry of the GPU called `device_name` (as torch or NVML names it), or None."""
    words = set(re.split(r"[^a-z0-9]+", device_name.lower()))
    return next((dict(entry) for entry in reference_table() if all(w in words for w in entry["match"])), None)


def pcie_peak_gbps(reference: dict[str, Any]) -> float | None:
    """Theoretical one-direction PCIe bandwidth of the reference's host link."""
    lane = PCIE_LANE_GBPS.get(int(reference.get("pcie_gen") or 0))
    lanes = reference.get("pcie_lanes")
    return round(lane * int(lanes), 2) if lane and lanes else None


def peak_for(reference: dict[str, Any] | None, kind: str) -> tuple[str, float] | None:
    """(reference key, peak) that a result of `kind` (bf16_tflops, memory_gbps, pcie_gbps, nvlink_gbps)
    is measured against, or None when the device or figure is unknown."""
    if reference is None:
        return None
    if kind == "pcie_gbps":
        peak = pcie_peak_gbps(reference)
        return ("pcie_gbps", peak) if peak else None
    if kind == "nvlink_gbps":
        # The datasheet figure counts both directions; a one-way copy can reach half of it.
        total = reference.get("nvlink_gbps")
        return ("nvlink_gbps_one_way", float(total) / 2.0) if total else None
    value = reference.get(kind)
    return (kind, float(value)) if value else None


def efficiency(reference: dict[str, Any] | None, kind: str | None, median: float,
               unit_scale: float = 1.0) -> Efficiency | None:
    """{reference, model, peak, ratio}: the median (times `unit_scale`, into the peak's unit) over the peak."""
    if kind is None:
        return None
    found = peak_for(reference, kind)
    if found is None or reference is None:
        return None
    key, peak = found
    return {"reference": key, "model": reference["model"], "peak": peak,
            "ratio": round(median * unit_scale / peak, 4)}
